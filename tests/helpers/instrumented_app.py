"""A small instrumented app, run as its own process: an agent that retrieves documents, calls
a tool and asks the OpenAI SDK for an answer, traced by a real instrumentation of the OpenAI SDK
(OpenInference's or OpenTelemetry's own) and exported over OTLP/HTTP by the real exporter.

    python instrumented_app.py CONVENTION OTLP_ENDPOINT LLM_BASE_URL QUESTION [--count N] [--no-content]

CONVENTION is `openinference` or `genai`. The retrieval and tool spans are written by hand with
the convention's attributes, as a framework instrumented with it writes them; the LLM span is the
instrumentation's own. Prints the trace ids it exported, one a line.
"""

from __future__ import annotations

import argparse
import json
import os

DOCUMENTS = ["The Eiffel Tower is in Paris.", "It was finished in 1889."]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("convention", choices=["openinference", "genai"])
    parser.add_argument("endpoint")
    parser.add_argument("llm_base_url")
    parser.add_argument("question")
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--header", action="append", default=[], help="NAME=VALUE sent with every export")
    parser.add_argument("--no-content", action="store_true", help="genai: the instrumentation's default, which keeps message content off the span")
    args = parser.parse_args()
    if args.convention == "genai" and not args.no_content:
        # Message content on the span itself (not in separate log events), as the latest
        # experimental GenAI conventions write it.
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"

    import openai
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    headers = dict(header.split("=", 1) for header in args.header)
    provider = TracerProvider(resource=Resource.create({"service.name": f"demo-{args.convention}"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=args.endpoint, headers=headers)))
    trace.set_tracer_provider(provider)
    if args.convention == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)
    else:
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as OfficialInstrumentor

        OfficialInstrumentor().instrument(tracer_provider=provider)

    tracer = trace.get_tracer("demo-agent")
    client = openai.OpenAI(base_url=args.llm_base_url, api_key="test-key")
    for _ in range(args.count):
        with tracer.start_as_current_span("agent", attributes=_agent_attributes(args.convention, args.question)) as root:
            with tracer.start_as_current_span("retrieve", attributes=_retrieval_attributes(args.convention, args.question)):
                pass
            with tracer.start_as_current_span("lookup_weather", attributes=_tool_attributes(args.convention)):
                pass
            reply = client.chat.completions.create(
                model="gpt-4o-mini",
                messages=[
                    {"role": "system", "content": "Answer from these documents:\n" + "\n".join(DOCUMENTS)},
                    {"role": "user", "content": args.question},
                ],
            )
            answer = reply.choices[0].message.content or ""
            root.set_attributes(_agent_output(args.convention, answer))
            print(format(root.get_span_context().trace_id, "032x"), flush=True)
    provider.force_flush()
    provider.shutdown()


def _agent_attributes(convention: str, question: str) -> dict[str, str]:
    if convention == "openinference":
        return {"openinference.span.kind": "AGENT", "input.value": question}
    return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "demo", "gen_ai.input.messages": json.dumps(
        [{"role": "user", "parts": [{"type": "text", "content": question}]}])}


def _agent_output(convention: str, answer: str) -> dict[str, str]:
    if convention == "openinference":
        return {"output.value": answer}
    return {"gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": answer}]}])}


def _retrieval_attributes(convention: str, question: str) -> dict[str, str]:
    if convention == "openinference":
        attributes = {"openinference.span.kind": "RETRIEVER", "input.value": question}
        for index, text in enumerate(DOCUMENTS):
            attributes[f"retrieval.documents.{index}.document.content"] = text
            attributes[f"retrieval.documents.{index}.document.id"] = f"doc-{index}"
        return attributes
    return {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": json.dumps(
        [{"id": f"doc-{index}", "score": 0.9, "content": text} for index, text in enumerate(DOCUMENTS)])}


def _tool_attributes(convention: str) -> dict[str, str]:
    arguments, result = json.dumps({"city": "Paris"}), json.dumps({"forecast": "sunny"})
    if convention == "openinference":
        return {"openinference.span.kind": "TOOL", "tool.name": "lookup_weather", "tool.parameters": arguments,
                "input.value": arguments, "output.value": result}
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_weather",
            "gen_ai.tool.call.arguments": arguments, "gen_ai.tool.call.result": result}


if __name__ == "__main__":
    main()
