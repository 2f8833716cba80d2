// A Node app calling a model with the Vercel AI SDK (generateText with one tool), its
// telemetry (experimental_telemetry) traced by the OpenTelemetry JS SDK and exported over
// OTLP/HTTP (protobuf) to the endpoint given.
//
//     node app.js OTLP_ENDPOINT LLM_BASE_URL QUESTION
const { trace, context } = require("@opentelemetry/api");
const { BasicTracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace-base");
const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-proto");
const { resourceFromAttributes } = require("@opentelemetry/resources");
const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks");
const { generateText, tool, stepCountIs } = require("ai");
const { createOpenAI } = require("@ai-sdk/openai");
const { z } = require("zod");

async function main() {
  const [endpoint, baseURL, question] = process.argv.slice(2);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "demo-vercel" }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint }))],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  const openai = createOpenAI({ baseURL, apiKey: "test-key" });
  const result = await generateText({
    model: openai.chat("gpt-4o-mini"),
    system: "Answer the question; look facts up with the tool.",
    prompt: question,
    tools: {
      lookup_landmark: tool({
        description: "Facts about a landmark",
        inputSchema: z.object({ name: z.string() }),
        execute: async ({ name }) => ({ city: "Paris", finished: 1889, name }),
      }),
    },
    stopWhen: stepCountIs(3),
    experimental_telemetry: { isEnabled: true, functionId: "landmarks" },
  });
  console.log(JSON.stringify(result.text));
  await provider.forceFlush();
  await provider.shutdown();
}

main().catch((error) => { console.error(error); process.exit(1); });
