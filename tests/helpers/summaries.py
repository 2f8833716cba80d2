"""A scripted judge for the summarization scorer: the summary's claims and the source's key
questions, each with the verdict a test names."""

from __future__ import annotations

from engine.testing import JudgeServer

SOURCE = "The council approved the new bridge on 3 May. It will cost 12 million euros and open in 2027."


def script_summary(judge: JudgeServer, claim_verdicts: list[str], coverage_verdicts: list[str]) -> None:
    claims = [f"claim {index}" for index in range(len(claim_verdicts))]
    questions = [{"question": f"question {index}?", "answer": f"answer {index}"} for index in range(len(coverage_verdicts))]
    judge.on("Claims", {"claims": claims})
    judge.on("SummaryClaimVerdicts", {"verdicts": [{"statement": c, "verdict": v, "reason": "r"} for c, v in zip(claims, claim_verdicts)]})
    judge.on("SummaryKeyQuestions", {"questions": questions})
    judge.on("SummaryCoverageVerdicts", {"verdicts": [{"question": q["question"], "verdict": v, "reason": "r"} for q, v in zip(questions, coverage_verdicts)]})
    judge.on("Reason", {"reason": "Explained."})
