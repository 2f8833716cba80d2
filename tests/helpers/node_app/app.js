// A Node app traced with the OpenTelemetry JS SDK: an agent span, a retrieval span and a tool
// span written with OpenInference's attributes, and the OpenAI SDK's call traced by
// OpenInference's instrumentation, exported over OTLP/HTTP (protobuf) to the endpoint given.
//
//     node app.js OTLP_ENDPOINT LLM_BASE_URL QUESTION
const { trace, context } = require("@opentelemetry/api");
const { BasicTracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace-base");
const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-proto");
const { resourceFromAttributes } = require("@opentelemetry/resources");
const { OpenAIInstrumentation } = require("@arizeai/openinference-instrumentation-openai");
const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks");
const OpenAI = require("openai");

async function main() {
  const [endpoint, baseURL, question] = process.argv.slice(2);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "demo-node" }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint }))],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  const instrumentation = new OpenAIInstrumentation();
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument(OpenAI);
  const tracer = provider.getTracer("demo-agent");
  const documents = ["The Eiffel Tower is in Paris.", "It was finished in 1889."];
  const client = new OpenAI({ baseURL, apiKey: "test-key" });
  await tracer.startActiveSpan("agent", { attributes: { "openinference.span.kind": "AGENT", "input.value": question } }, async (root) => {
    const retrieval = tracer.startSpan("retrieve", { attributes: {
      "openinference.span.kind": "RETRIEVER",
      ...Object.fromEntries(documents.map((text, index) => [`retrieval.documents.${index}.document.content`, text])),
    } });
    retrieval.end();
    const tool = tracer.startSpan("lookup_weather", { attributes: {
      "openinference.span.kind": "TOOL", "tool.name": "lookup_weather", "tool.parameters": JSON.stringify({ city: "Paris" }),
      "output.value": JSON.stringify({ forecast: "sunny" }),
    } });
    tool.end();
    const reply = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "Answer from these documents:\n" + documents.join("\n") },
        { role: "user", content: question },
      ],
    });
    root.setAttribute("output.value", reply.choices[0].message.content);
    console.log(root.spanContext().traceId);
    root.end();
  });
  await provider.forceFlush();
  await provider.shutdown();
}

main().catch((error) => { console.error(error); process.exit(1); });
