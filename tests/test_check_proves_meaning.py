"""`scorers check` proves what a scorer means by running it, without a judge, on answers made
from its own schemas (engine/catalog/proving): one catalog per mistake that loads fine and
would score wrong with no error (tests/proving_catalogs/, each saying which on its first line),
named at the author's line. Certain mistakes are problems (exit 1); the rest warnings."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.catalog import builtin_catalog_path
from engine.cli import app

HERE = Path(__file__).resolve().parent / "proving_catalogs"
ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()

# Lines about other matters (an answer list left to the default bound) are left out.
UNRELATED = ("[unbounded-answer]", ": note: ")

# (catalog folder, exit status, the lines `scorers check` prints for it)
MISTAKES: list[tuple[str, int, list[str]]] = [
    ("share_by_whole_division", 0, [
        "share_by_whole_division/catalog.yaml:18:16: warning: scorers.short-sentences.score.score: `//` rounds the quotient down to a whole number: a part over its whole is 0 until the part is all of it, so the share is 0 or 1; write `/` [whole-division-of-counts]",
    ]),
    ("parts_multiplied_where_the_lowest_decides", 0, [
        "parts_multiplied_where_the_lowest_decides/catalog.yaml:20:16: warning: scorers.grounded-and-brief.score.score: combines brevity, supported by `*`, but the scorer's description takes 'The lower of' them: the parts are multiplied where one was to decide; write `[brevity, supported] | min` (times the scale) [extreme-against-words]",
    ]),
    ("tool_named_otherwise_than_the_file_does", 0, [
        "tool_named_otherwise_than_the_file_does/catalog.yaml:10:13: warning: scorers.never-cancels.options.tool: 'cancel_bookings' is named nowhere else in the file, which names the tool 'cancel_booking': calls are matched by their exact name, so 'cancel_bookings' is never found; write 'cancel_booking' [tool-named-otherwise]",
    ]),
    ("typographic_apostrophe_in_a_matched_text", 0, [
        "typographic_apostrophe_in_a_matched_text/catalog.yaml:10:13: warning: scorers.carries-the-disclaimer.options.texts: 'This isn’t financial advice' holds a typographic '’', and it is matched as written: an output that writes the plain ' never matches; write ', or compare through `normalize()` [typographic-quote]",
    ]),
    ("jury_vote_line_apart_from_the_pass_line", 0, [
        "jury_vote_line_apart_from_the_pass_line/catalog.yaml:9:18: warning: scorers.faithfulness-jury.judges.threshold: 0.5 is each judge's vote line, apart from the scorer's own pass line, 0.8: the majority passes an item each judge scores between the two, which the pass line would fail; write 0.8 [vote-line-apart]",
    ]),
    ("rank_picked_in_a_ratio_where", 0, [
        "rank_picked_in_a_ratio_where/catalog.yaml:19:20: warning: scorers.top-passages-useful.score.values.precision.items: the ratio is taken over every item of `analyze.verdicts`, while its `where:` picks the items that count by rank: the items not picked count as failing, and the share shrinks with the list; pick them in `items:` (`analyze.verdicts[:options.k]`) and leave `where:` to judge them [picked-in-a-ratio-where]",
    ]),
    ("schema_field_described_as_its_sibling", 0, [
        "schema_field_described_as_its_sibling/schemas/listing_facts.yaml:13:18: warning: listing_facts.yaml: missing is described word for word as present is ('The required facts (price, size, delivery time) the listing states plainly.'): the judge reads the two fields as one and fills them alike; write what goes in missing [entries-alike]",
    ]),
    ("exclusive_false_where_other_calls_count", 0, [
        "exclusive_false_where_other_calls_count/catalog.yaml:12:18: warning: scorers.refund-lookup-only.options.exclusive: false, but the scorer's description says what `exclusive: true` does ('A call to a tool that was not expected counts against the score.'; the option: 'Calls to tools that were not expected count against the score.'): write `exclusive: true`, or the words the value means [flag-against-words]",
    ]),
    ("tool_results_where_missing_context_is_unscored", 0, [
        "tool_results_where_missing_context_is_unscored/catalog.yaml:10:32: warning: scorers.policy-grounded.context_from_tool_results: true judges an item that comes without context against the tool results in its output, but the description leaves such an item unscored ('Web search results are not evidence, and a reply that comes without its policy text is not scored'): it is scored on evidence the description excludes; remove the line (false) [tool-results-against-description]",
    ]),
    ("rating_ends_turned_round_through_options", 0, [
        "rating_ends_turned_round_through_options/prompts/clarity/evaluate.j2:6:87: warning: plain-language.evaluate: the prompt defines score from 1 to 5 with lower values better ('Write your \"evaluation\" first, quoting the letter. Then give \"score\": an integer from 1 (clear: anyo'), but the answer schema criteria_evaluation.yaml declares higher values better: the judge rates by the prompt and the score counts by the schema, so each rating counts the other way; make the two agree [verdict-defined-against-meaning]",
    ]),
    ("turns_kept_for_one_role_told_apart", 0, [
        "turns_kept_for_one_role_told_apart/prompts/patience/rate.j2:3:1: warning: agent-patience: the loop over `turns` keeps only the turns whose role is 'assistant', yet its body tells 'user' turns apart from them: the user's messages never reach the judge; keep every turn (drop the `if`), or the role the rule is about [turns-under-one-role]",
    ]),
    ("answer_key_read_but_not_required", 0, [
        "answer_key_read_but_not_required/catalog.yaml:12:15: warning: scorers.marked-against-the-key.requires: leaves out 'ground_truth', which the steps read and the description judges against ('answer key'): an item without it is judged without it (a guarded prompt drops it) instead of left not scorable; add it: [input, output, ground_truth] [required-dropped]",
    ]),
    ("abs_of_the_last_operand", 0, [
        "abs_of_the_last_operand/catalog.yaml:22:18: warning: scorers.count-close-enough.compare.values.close: `| abs` takes only `reference`, what is directly on its left, so the difference stays signed and every value on one side of it passes a bound on its size; write `(given - reference) | abs` [abs-of-one-operand]",
    ]),
    ("monitor_of_the_base_not_its_extension", 0, [
        "monitor_of_the_base_not_its_extension/catalog.yaml:10:13: warning: monitors.replies_straying_from_policy.scorer: faithfulness is the base that policy-faithfulness, this catalog's scorer, extends: outcomes are kept under the scorer that ran, so it watches the base's, never policy-faithfulness's; name policy-faithfulness [named-for-another-scorer]",
    ]),
    ("steps_rating_on_another_range", 0, [
        "steps_rating_on_another_range/catalog.yaml:15:13: warning: scorers.refund-explained.options.evaluation_steps: gives 5 for the best case, but max_score is 10 (the judge is held to 1..10 for score): an output the texts give their best, 5, is scored as if it were not the best; write the ratings on that range, or max_score: 5 [ratings-against-range]",
        "steps_rating_on_another_range/catalog.yaml:16:28: warning: scorers.refund-explained.options.max_score: 10, but `evaluation_steps` rates from 1 to 5 ('Rate 5 when both checks pass, 3 when one fails, 1 when both fail.'): the judge is held to 1..10 for score, so an output the texts give their best, 5, is scored as if it were not the best; write max_score: 5, or the texts on the 1 to 10 range [ratings-against-range]",
    ]),
    ("steps_rating_past_the_range", 0, [
        "steps_rating_past_the_range/catalog.yaml:15:13: warning: scorers.refund-explained.options.evaluation_steps: gives 5 for the best case, but max_score is 3 (the judge is held to 1..3 for score): the judge may never give the texts' best, 5, which the schema refuses; write the ratings on that range, or max_score: 5 [ratings-against-range]",
        "steps_rating_past_the_range/catalog.yaml:16:28: warning: scorers.refund-explained.options.max_score: 3, but `evaluation_steps` rates from 1 to 5 ('Rate 5 when both checks pass, 3 when one fails, 1 when both fail.'): the judge is held to 1..3 for score, so the judge may never give the texts' best, 5, which the schema refuses; write max_score: 5, or the texts on the 1 to 3 range [ratings-against-range]",
    ]),
    ("cascade_to_the_first_judges_snapshot", 0, [
        "cascade_to_the_first_judges_snapshot/catalog.yaml:8:20: warning: scorers.careful-hallucination.cascade.escalate_to: openai/gpt-4o-mini-2024-07-18 is openai/gpt-4o-mini, the judge that judged first: an item sent on is judged again by the same model, which gives it the same verdict, and only costs; name the stronger model [cascade-to-itself]",
    ]),
    ("jury_of_a_model_and_its_snapshot", 0, [
        "jury_of_a_model_and_its_snapshot/catalog.yaml:7:64: warning: scorers.faithfulness-panel.judges.models: 'openai/gpt-4o-mini-2024-07-18' is 'openai/gpt-4o-mini' again, under another name of the same model: the same model twice is one judge counted twice (at temperature 0 its answers are the same) [repeated-judge]",
    ]),
    ("queue_labelling_the_step_above", 0, [
        "queue_labelling_the_step_above/catalog.yaml:66:16: warning: queues.tone-review.steps.answers: topic.verdicts, but the queue's name speaks of tone, another step of reply-manners: copied from its neighbour, it has people label the topic step's answers; did you mean tone.verdicts? [named-for-another-step]",
    ]),
    ("value_copied_from_the_block_above", 0, [
        "value_copied_from_the_block_above/catalog.yaml:13:16: warning: reply-manners.threshold: 0.8 passes an answer with most verdicts 'no' (bad) (verdicts yes, yes; verdicts no, no: score 1), on a score where higher is better: the line is on the side of the bad answers [pass-line-against-meaning]",
        "value_copied_from_the_block_above/catalog.yaml:23:13: warning: reply-manners.tone: no later step reads 'tone', so its judge call is paid for nothing: read its answer in the score (or a prompt), or remove the step [unread-answer]",
        "value_copied_from_the_block_above/catalog.yaml:41:20: warning: scorers.reply-manners.score.values.polite: written exactly as `on_topic` is (line 34), so the two compute one number under two names; the judged step `tone` never reaches the score: should `polite` read it? [value-copied]",
    ]),
    ("step_only_the_reason_shows", 0, [
        "step_only_the_reason_shows/catalog.yaml:13:16: warning: reply-manners.threshold: 0.8 passes an answer with most verdicts 'no' (bad) (verdicts yes, yes; verdicts no, no: score 1), on a score where higher is better: the line is on the side of the bad answers [pass-line-against-meaning]",
        "step_only_the_reason_shows/catalog.yaml:23:13: warning: reply-manners.tone: only the reason shows 'tone', and no step toward the score reads it, so its judge call changes no score: read its answer in the score, or remove the step [unread-answer]",
    ]),
    ("one_label_where_two_people_were_meant", 0, [
        "one_label_where_two_people_were_meant/catalog.yaml:13:22: warning: queues.claims-golden.labels_per_item: 1, but its comment gives 2 (\"two people label each answer: their agreement is the ceiling for the judge's\"): write 2, or the comment the number means [unit-against-comment]",
    ]),
    ("tool_order_against_the_description", 0, [
        "tool_order_against_the_description/catalog.yaml:9:14: warning: scorers.looks-up-before-replacing.options.tools: create_replacement, get_order, but the scorer's description names them in the order get_order, create_replacement: runs that keep the described order fail; write [get_order, create_replacement] [order-against-description]",
    ]),
    ("token_set_where_every_word_counts", 0, [
        "token_set_where_every_word_counts/catalog.yaml:9:15: warning: scorers.redline-close.options.method.default: token_set leaves aside words one text has and the other lacks (extra or missing words), but the words around it ask for them to count ('every word' in \"phrase order aside 1 when the redline is at least `threshold` similar to the lawyer's, the order of…\"): such differences never lower the similarity; `ratio` counts every character in order, `token_sort` sets only the order aside [method-against-words]",
    ]),
    ("min_samples_against_its_comment", 0, [
        "min_samples_against_its_comment/catalog.yaml:10:18: warning: monitors.rude_replies_rising.min_samples: 2, but its comment gives 20 ('never page on fewer than 20 replies'): write 20, or the comment the number means [unit-against-comment]",
    ]),
    ("min_samples_above_what_the_window_holds", 0, [
        "min_samples_above_what_the_window_holds/catalog.yaml:10:18: warning: monitors.memo_faithfulness_falling.min_samples: 50 outcomes, but the window (1d) holds about 40 by its comment: the monitor never has enough and never alerts; lower min_samples below 40, or widen the window [never-alerts]",
    ]),
    ("count_that_cannot_be_zero", 0, [
        "count_that_cannot_be_zero/catalog.yaml:18:16: warning: obligations-stated.score: no answer its schema accepts scores 0, the lowest of its range (0 to 1): the least any scores is 0.05; check what the score divides or multiplies by [score-never-reaches]",
        "count_that_cannot_be_zero/schemas/misstated.yaml:9:14: warning: misstated.yaml: misstated has `minimum: 1`, but its description gives 0 ('How many obligations the memo misstates; 0 when it states every one as the contract does.'): the judge can never answer 0; write `minimum: 0` [bound-against-description]",
    ]),
    ("mode_against_the_own_description", 0, [
        "mode_against_the_own_description/catalog.yaml:9:13: warning: scorers.refund-flow-calls.options.mode: 'subset' is, by the description, 'every call made is an expected one (expected calls may be left out)', but the scorer's own description says what 'unordered' does ('the same calls in any order'): write `mode: unordered` [word-against-comment]",
    ]),
    ("context_read_but_not_required", 0, [
        "context_read_but_not_required/catalog.yaml:9:15: warning: scorers.order-facts.requires: leaves out 'context', which the steps read, while the description leaves items without such a thing unscored: an item without context is judged with it missing; add it: [output, context] [required-dropped]",
        "context_read_but_not_required/catalog.yaml:26:20: warning: order-facts.score: `empty: 1` gives an answer with empty lists (no facts: nothing found to judge) the best score, 1, but `confirmed` is a share of the good answers (all good gives it 1, all bad 0): an output that says nothing has earned nothing good, and is called perfect; write `empty: 0`, or, if nothing to judge means nothing wrong (as a share of supported claims may), say so with `# scorers: ignore[empty-scores-best]` on this line [empty-scores-best]",
    ]),
    ("skip_never_true_under_min_items", 0, [
        "skip_never_true_under_min_items/schemas/next_steps.yaml:7:15: warning: next-steps-backed.score.skip_if: `not announced.next_steps` is never true for every answer tried (empty and long lists among them): the step always runs; the answer schema's `minItems: 1` keeps the list from ever being empty (is it 0?) [skip-never]",
    ]),
    ("sampling_where_the_same_verdict_is_meant", 0, [
        "sampling_where_the_same_verdict_is_meant/catalog.yaml:6:20: warning: scorers.gate-relevancy.judge.temperature: 0.7 samples the judge's answer, but its comment wants the same one every time ('deterministic verdicts: the pytest gate must not flake'): at a temperature above 0 the judge may answer the same item otherwise on the next run; write `temperature: 0` [unit-against-comment]",
    ]),
    ("travellers_turns_counted_from_the_assistant", 0, [
        "travellers_turns_counted_from_the_assistant/catalog.yaml:12:31: warning: scorers.traveller-effort.count.values.traveller_messages: keeps the assistant's turns, but its name speaks of the user's: write `selectattr('role', 'equalto', 'user')` [role-against-name]",
    ]),
    ("at_most_written_as_less_than", 0, [
        "at_most_written_as_less_than/catalog.yaml:21:16: warning: scorers.no-double-booking.score.score: `< options.max_bookings` refuses the bound itself, but 'at most' takes it in: an item exactly at the limit fails; write `<=` [strict-where-inclusive]",
    ]),
    ("mode_against_its_comment", 0, [
        "mode_against_its_comment/catalog.yaml:6:13: warning: scorers.booking-path-covered.options.mode: 'subset' is, by the description, 'every call made is an expected one (expected calls may be left out)', but its comment says what 'superset' does ('every expected call was made (other calls may come too)'): write `mode: superset` [word-against-comment]",
    ]),
    ("needed_calls_asked_as_unneeded", 0, [
        "needed_calls_asked_as_unneeded/prompts/efficiency/analyze.j2:10:6: warning: trip-efficiency.analyze: the prompt asks for least_steps as 'the number of calls that were not needed', but step_efficiency.yaml describes it as \"How many of the agent's calls were needed.\": one of them turns 'need' round, so the judge answers the complement of what the score reads; make the two say the same [field-asked-as-complement]",
    ]),
    ("german_instructions_against_the_meaning", 0, [
        "german_instructions_against_the_meaning/catalog.yaml:9:19: warning: queues.teaser-review.instructions: tell reviewers \"yes\" means bad ('die Aussage im Kontext nicht belegt ist'), but the verdict they label, faithfulness's analyze.verdicts, declares \"yes\" good: people label the other way from the judge and their agreement with it is measured backwards; make the instructions say what the schema means [verdict-defined-against-meaning]",
    ]),
    ("rating_exclusive_of_its_described_end", 0, [
        "rating_exclusive_of_its_described_end/catalog.yaml:17:16: warning: helpfulness.score: no answer its schema accepts scores 0, the lowest of its range (0 to 1): the least any scores is 0.25; check what the score divides or multiplies by [score-never-reaches]",
        "rating_exclusive_of_its_described_end/schemas/helpfulness_rating.yaml:9:23: warning: helpfulness_rating.yaml: rating has `exclusiveMinimum: 1`, which refuses 1, but its description gives 1 as an end ('from 1 (no help at all) to 5'): the judge can never answer it; write `minimum: 1` [bound-against-description]",
    ]),
    ("cascade_escalating_to_its_first_judge", 0, [
        "cascade_escalating_to_its_first_judge/catalog.yaml:8:20: warning: scorers.careful-hallucination.cascade.escalate_to: openai/gpt-4o-mini is the judge that judged first: an item sent on is judged again by the same model, which gives it the same verdict, and only costs; name the stronger model [cascade-to-itself]",
    ]),
    ("least_confidence_at_an_even_chance", 0, [
        "least_confidence_at_an_even_chance/catalog.yaml:7:23: warning: scorers.careful-hallucination.cascade.min_confidence: 0.5 never acts: a verdict's confidence is the chance of its likelier side, 0.5 at the least, so no verdict is ever less sure than 0.5 and nothing is sent on; write the confidence below which a verdict goes on (e.g. 0.8) [no-confidence]",
    ]),
    ("weights_crossed_between_parts", 0, [
        "weights_crossed_between_parts/catalog.yaml:26:18: warning: scorers.trajectory-shape.score.score: `options.order_weight` weighs `necessary`, which `necessity_weight` is named for: each part counts at the other's weight; swap them [weights-crossed]",
    ]),
    ("weights_against_the_description", 0, [
        "weights_against_the_description/catalog.yaml:11:16: warning: scorers.teaser-summary.score.score: weighs alignment 0.3, coverage 0.7, but the scorer's description gives alignment 70%, coverage 30%: the weights are crossed; swap them [weights-against-description]",
    ]),
    ("queue_hides_the_reference_of_a_computed_scorer", 0, [
        "queue_hides_the_reference_of_a_computed_scorer/catalog.yaml:10:11: warning: queues.command-review.show: leaves out `ground_truth`, which command-matches's computation reads (step check): reviewers labelling its answers decide without what the computation saw; add it to `show:` [queue-hides-field]",
    ]),
    ("market_keyed_by_a_reserved_code", 0, [
        "market_keyed_by_a_reserved_code/catalog.yaml:16:22: warning: scorers.market-bias.options.market_notes[1].market: 'UK' is no ISO 3166-1 country code: United Kingdom is 'GB' [country-code]",
    ]),
    ("glossary_of_another_market", 0, [
        "glossary_of_another_market/prompts/toxicity-br/analyze.j2:2:13: warning: toxicity-br/analyze.j2: includes 'partials/glossary_de.j2', named for 'de', in a prompt named for 'br', beside 'partials/glossary_br.j2': the judge is shown the other market's text; include 'partials/glossary_br.j2' [partial-of-another-locale]",
    ]),
    ("case_kept_where_the_option_says_fold", 0, [
        "case_kept_where_the_option_says_fold/catalog.yaml:17:17: warning: scorers.intent-label-match.check.values.same: `case=options.case_sensitive` takes away what `case_sensitive` says to keep: normalize's `case` removes it when true, so it is removed exactly when the option asks to keep it; write `case=not options.case_sensitive` [flag-inverted]",
        "case_kept_where_the_option_says_fold/catalog.yaml:20:16: warning: intent-label-match: every output tried scores 0 (the output is the expected answer, the output is nearly the expected answer, the output is the sample's, the output is unrelated): the score never reads the output it requires; is a value that should read `output` given another text? [output-never-read]",
    ]),
    ("characters_times_characters_per_token", 0, [
        "characters_times_characters_per_token/catalog.yaml:21:19: warning: scorers.fits-the-slot.size.values.tokens: multiplies characters (`output | length` counts characters) by `options.chars_per_token`, characters per one of tokens: that is no number of tokens; divide: `... / options.chars_per_token` [rate-turned-round]",
    ]),
    ("monitor_named_for_another_scorer", 0, [
        "monitor_named_for_another_scorer/catalog.yaml:18:13: warning: monitors.secrets_leaked.scorer: code-in-fences, but the name speaks of leaked-secrets, another scorer of this catalog: copied from its neighbour, it watches what its name does not say; name leaked-secrets [named-for-another-scorer]",
    ]),
    ("live_monitor_of_a_scorer_traces_never_run", 0, [
        "live_monitor_of_a_scorer_traces_never_run/catalog.yaml:11:13: warning: monitors.grounding_falls.scorer: hallucination is not among the scorers the `traces:` section runs live (faithfulness): the monitor reads live outcomes of hallucination, which this catalog never makes; watch one of those [named-for-another-scorer]",
    ]),
    ("weight_against_its_comment", 0, [
        "weight_against_its_comment/catalog.yaml:6:27: warning: scorers.travel-relevancy.options.uncertainty_weight.default: 0.3 is what it counts, but its comment gives 0.5 ('an indirect statement counts half as much as a direct one'): write 0.5, or the comment the number means [unit-against-comment]",
    ]),
    ("window_of_a_minute_for_a_month", 0, [
        "window_of_a_minute_for_a_month/catalog.yaml:9:13: warning: monitors.bias_creeping_up.window: 1m is 1 minutes, but its comment speaks of about 30d ('the last month of replies'): `m` is minutes, a month `30d`; write `30d` [unit-against-comment]",
    ]),
    ("rounded_onto_the_pass_line", 0, [
        "rounded_onto_the_pass_line/catalog.yaml:8:16: warning: kb-faithfulness.score.round: rounding to 1 decimal moves scores up to 0.05 onto the pass line, 0.8: a 0.75 shows as 0.8 and passes; round to 2 [round-across-the-line]",
    ]),
    ("median_of_two_judges", 0, [
        "median_of_two_judges/catalog.yaml:6:15: warning: scorers.jury-hallucination.judges.models: two judges under `aggregate: median`: the median of two scores is their mean, so one judge that goes astray is never outvoted; add a third judge (an odd number), or write the rule two judges follow (`mean`, `strictest`) [too-few-judges]",
    ]),
    ("zero_as_no_cap", 0, [
        "zero_as_no_cap/catalog.yaml:6:12: warning: scorers.tool-call-budget.options.max.default: 0 is the tightest limit, not none ('no cap yet: every run passes while we collect the baseline'): everything above 0 is held to it and fails; for no limit, write a number no item reaches, or leave the option to a scorer without it [zero-as-no-limit]",
    ]),
    ("last_call_taken_first", 0, [
        "last_call_taken_first/catalog.yaml:14:22: warning: scorers.ends-with-tests.calls.values.last_call: takes the first item, but its name says the last: write `[-1]` (or `| last`) [end-against-name]",
    ]),
    ("problems_at_least_one", 0, [
        "problems_at_least_one/schemas/patch_problems.yaml:7:15: warning: patch_problems.yaml: problems has `minItems: 1`, but its description lets it be empty ('The problems a careful reviewer finds in the patch; empty when it has none.'): a judge decoding under the schema must name 1 or more where there are none, and the best score is out of reach; write `minItems: 0` [bound-against-description]",
    ]),
    ("one_category_of_every", 0, [
        "one_category_of_every/catalog.yaml:15:16: warning: policy-breaches.score: no answer its schema accepts scores 1, the highest of its range (0 to 1): the most any scores is 0.17; check what the score divides or multiplies by [score-never-reaches]",
        "one_category_of_every/schemas/policy_categories.yaml:7:15: warning: policy_categories.yaml: categories has `maxItems: 1`, but its description asks for every one ('Every policy category the reply breaks, each once.'): the judge can give only one, and the rest are never counted; write the most there can be [bound-against-description]",
    ]),
    ("queue_flagging_on_most", 0, [
        "queue_flagging_on_most/catalog.yaml:11:7: warning: queues.forum-review.instructions: tell reviewers 'Flag a reply only when most' (a count of bad verdicts), but forum-toxicity's pass line flags an answer with one bad verdict of three (it scores 0.33): people and the judge flag by two rules, and their agreement measures the rule, not the judge; make the instructions say what the pass line does [flag-rule-against-pass-line]",
    ]),
    ("more_than_one_for_a_single", 0, [
        "more_than_one_for_a_single/catalog.yaml:11:21: warning: any-toxic-statement.score: the description says 'at least one', so one bad verdict should decide, but an answer with one verdict of 3 bad (3 statements; verdicts yes, no, no) scores 0 and passes (every one bad scores 1); sum the items up with `max` or `min` (the worst of them), or make the description say how the items are summed up [reducer-against-description]",
        "more_than_one_for_a_single/catalog.yaml:14:16: warning: scorers.any-toxic-statement.score.score: `toxic > 1` holds from two on, but the scorer's description speaks of 'at least one': a count of one is not above 1; write `toxic >= 1` [more-than-one-for-one]",
    ]),
    ("one_branch_off_the_scale", 0, [
        "one_branch_off_the_scale/catalog.yaml:15:16: warning: scorers.grounding-of-10.score.score: one branch is multiplied by `options.scale` and the other is 1, not on the scale (on a scale to 10 it is 1 of 10): bracket the condition, `(... if ... else 1) * options.scale` [branch-off-the-scale]",
    ]),
    ("empty_output_scored_against_the_description", 0, [
        "empty_output_scored_against_the_description/catalog.yaml:9:19: warning: scorers.commit-subject-length.empty_output: score runs the scorer on an empty output, but the description says such an output is not scored ('A reply with no message at all is not scored here'): it gets a score and counts in the mean and the pass rate; write `empty_output: not_scorable` [empty-scored-against-description]",
    ]),
    ("rank_below_the_first_n", 0, [
        "rank_below_the_first_n/catalog.yaml:14:20: warning: scorers.top3-precision.score.values.useful.where: `rank < 3` keeps the first 2, since `rank` counts from 1, but 'first three' speaks of the first 3; write `rank <= 3` [rank-from-one]",
    ]),
    ("convention_against_the_apps_instrumentation", 0, [
        "convention_against_the_apps_instrumentation/catalog.yaml:6:15: warning: traces.convention: `openinference` means the spans carry OpenInference's attributes, but what is written of it says the spans carry the GenAI conventions' gen_ai.* attributes (\"the app is traced by opentelemetry-instrumentation-openai-v2: gen_ai.* attributes; traces; A convention other than the one the app's instru…\"): that is `genai`; write it, or say in the comment what `openinference` does [word-against-comment]",
    ]),
    ("pass_line_failing_the_rating_its_comment_passes", 0, [
        "pass_line_failing_the_rating_its_comment_passes/catalog.yaml:5:16: warning: advice-quality.threshold: 0.8 fails an answer rated 4 (it scores 0.75), but the comment says a 4 passes ('a rating of 4 or 5 passes'): write the line the comment means, at or below 0.75 [pass-line-against-comment]",
    ]),
    ("queue_definitions_swapped", 0, [
        "queue_definitions_swapped/catalog.yaml:8:64: warning: queues.claims-review.instructions: tell reviewers \"no\" and \"unsure\" each in the words the verdict they label gives the other ('no': 'the context contradicts it'; 'unsure': 'the context does not mention it'): people answer the one where the judge answers the other, and their agreement with it is measured on crossed labels; swap the two definitions [verdict-defined-against-meaning]",
    ]),
    ("requires_leaving_out_the_context", 0, [
        "requires_leaving_out_the_context/catalog.yaml:5:15: warning: scorers.guideline-faithfulness.requires: leaves out 'context', which faithfulness requires and its steps read: `requires:` replaces the base's list, so an item without context is judged with it missing instead of left not scorable; list every field: [output, context] [required-dropped]",
    ]),
    ("on_skip_scored_where_not_scorable", 0, [
        "on_skip_scored_where_not_scorable/catalog.yaml:11:18: warning: ward-hallucination.steps.score.on_skip: 0 is the score of every item the step skips (the best score), but the scorer's description says such items are not scored ('is not scorable'): they count in the mean and the pass rate as if judged; write `on_skip: {not_scorable: \"why\"}` [skip-scored]",
    ]),
    ("where_naming_what_to_leave_out", 0, [
        "where_naming_what_to_leave_out/catalog.yaml:9:29: warning: traces.where.deployment.environment: 'staging' keeps only the spans whose deployment.environment is 'staging', but its comment leaves them out ('leave the staging traffic out'): `where:` keeps what it names and drops the rest; name the value to keep [kept-not-left-out]",
    ]),
    ("tools_described_alike", 0, [
        "tools_described_alike/catalog.yaml:9:47: warning: scorers.order-desk-tools.options.available_tools[1].description: 'cancel_order' is given the same description as 'get_order' ('Look up an order by its id and give its status.'): the judge reads the two as one thing and tells them apart by name only; write what 'cancel_order' is [entries-alike]",
    ]),
    ("sampled_rate_past_the_sampling", 0, [
        "sampled_rate_past_the_sampling/catalog.yaml:14:12: warning: monitors.scoring_falls_behind.below: 0.9 is past the share the scorer is sampled at, 0.1 (`traces: sampling:`): sampled_rate is the share of every reply seen that was queued, at most 0.1, so the monitor alerts all the time; write the line as a share of every reply (a tenth of the sampled dropped: 0.09) [beyond-sampled-share]",
    ]),
    ("queue_source_against_its_comment", 0, [
        "queue_source_against_its_comment/catalog.yaml:9:13: warning: monitors.judge_drifts_from_people.source: `live` means the outcomes of live scoring are read, but what is written of it says the outcomes of batch runs (`scorers eval`) are read ('people label the nightly `scorers eval` runs; judge drifts from people; people label the nightly `scorers eval` runs'): that is `batch`; write it, or say in the comment what `live` does [word-against-comment]",
    ]),
    ("weight_commented_as_what_is_lost", 0, [
        "weight_commented_as_what_is_lost/catalog.yaml:6:27: warning: scorers.on-topic-replies.options.uncertainty_weight.default: 0.8 is the share kept, as its declaration says ('What a statement judged \"unsure\" (partly relevant) counts, between 0 (nothing) and 1 (ful…'), but its comment gives the share lost ('a half-relevant statement loses 80% of its credit'): as written, it keeps 80% and loses 20%; write 0.2 [unit-against-comment]",
    ]),
    ("pass_line_apart_from_its_comment", 0, [
        "pass_line_apart_from_its_comment/catalog.yaml:5:16: warning: scorers.calibrated-relevancy.threshold: 0.46 is the pass line, but its comment gives the line as 0.64 (\"calibrate's best line on queue:review: 0.64\"): the scores between them pass or fail otherwise than the line it was taken from; write 0.64, or say in the comment why it differs [unit-against-comment]",
    ]),
    ("cascade_line_apart_from_the_pass_line", 0, [
        "cascade_line_apart_from_the_pass_line/catalog.yaml:8:18: warning: scorers.order-faithfulness.cascade.threshold: 0.5 is not the scorer's own pass line, 0.8: the replies sent on to the strong judge are those near 0.5, and those near 0.8, where pass and fail are decided, keep the cheaper judge's verdict; write 0.8, or leave it out [cascade-line-apart]",
    ]),
    ("confidence_from_a_judge_without_probabilities", 0, [
        "confidence_from_a_judge_without_probabilities/catalog.yaml:9:23: warning: scorers.careful-completion.cascade.min_confidence: 0.8 never acts: anthropic/claude-3-5-haiku-latest (Claude) returns no log-probabilities of its answer, so no verdict has a confidence to send on; give the judge `confidence_samples: 3`, or a judge that returns them [no-confidence]",
    ]),
    ("direction_against_its_pass_line_comment", 0, [
        "direction_against_its_pass_line_comment/catalog.yaml:6:16: warning: scorers.internal-jargon.direction: higher_is_better, but the comment of its pass line has the lower scores pass ('more than 2% jargon flags the reply'): reports, pass lines and monitors take the direction, so the best answers are ranked worst; write `direction: lower_is_better`, or correct the description [direction-against-description]",
    ]),
    ("worked_example_against_its_meaning", 0, [
        "worked_example_against_its_meaning/catalog.yaml:12:21: warning: returns-faithfulness.steps.analyze.examples[0]: the worked example answers 'no', bad by the meaning of `verdicts[].verdict`, with a reason that reads good ('the policy says members return items free of charge'): the judge learns to give 'no' where its meaning is the other, and such verdicts count the other way; give the value the reason means [example-against-meaning]",
    ]),
    ("jury_aggregate_against_its_comment", 0, [
        "jury_aggregate_against_its_comment/catalog.yaml:7:18: warning: scorers.toxicity-panel.judges.aggregate: `majority` means most of the judges' pass or fail votes decide, but what is written of it says the worst judge's score decides ('flag a reply as soon as any one judge flags it'): that is `strictest`; write it, or say in the comment what `majority` does [word-against-comment]",
    ]),
    ("monitor_statistic_against_its_comments", 0, [
        "monitor_statistic_against_its_comments/catalog.yaml:9:16: warning: monitors.retrieval_found_nothing.statistic: `error_rate` means the calls that failed (an error, a refused answer) are counted, but what is written of it says the items that could not be scored (nothing to judge, a field missing) are counted ('retrieval found nothing; An answer whose retrieval found no passage has no context and is left not scorable: page the search team when that…'): that is `not_scorable_rate`; write it, or say in the comment what `error_rate` does [word-against-comment]",
    ]),
    ("share_answered_as_a_whole_number", 0, [
        "share_answered_as_a_whole_number/schemas/questions_answered.yaml:8:11: warning: questions_answered.yaml: answered is declared `type: integer`, which takes whole numbers only, but its description shows 0.5, and from 0 to 1 it can only be 0 or 1: the judge can answer no value between, so every part comes back as an end; declare `type: number` [whole-number-part]",
    ]),
    ("weakest_rating_taken_with_max", 0, [
        "weakest_rating_taken_with_max/catalog.yaml:18:20: warning: scorers.product-answer.score.values.weakest: `max` keeps the greatest, but its name ('weakest') names the other end: the better of the values decides where the other was meant; write `min` [extreme-against-words]",
    ]),
    ("lower_of_two_described_taken_with_max", 0, [
        "lower_of_two_described_taken_with_max/catalog.yaml:10:16: warning: scorers.guideline-summary.score.score: `max` keeps the greatest, but the scorer's description ('the lower of') names the other end: the better of the values decides where the other was meant; write `min` [extreme-against-words]",
    ]),
    ("agent_scorer_on_llm_spans", 0, [
        "agent_scorer_on_llm_spans/catalog.yaml:7:29: warning: traces.llm.scorers.1: task-completion reads the tool calls' results (`tool_calls`, `tool_results`), but each LLM span is one model call: it holds no tool results, and no calls when it also wrote text, so every item is judged as if no tool had run; list it under `agent:`, whose items are whole runs with every call and its result [reads-what-spans-lack]",
    ]),
    ("span_output_read_from_its_input", 0, [
        "span_output_read_from_its_input/catalog.yaml:10:15: warning: traces.agent.fields.output: the item's output is read from `input.value`, but the openinference convention writes the input there: every item's output is then its input, and the scores judge the wrong text; remove the line to read it as the preset does (`attributes.\"output.value\"`) [field-reads-another]",
    ]),
    ("sampling_against_its_comment", 0, [
        "sampling_against_its_comment/catalog.yaml:9:20: warning: traces.sampling.hallucination: 0.01 scores one trace in 100, but its comment says one trace in 10 ('one trace in ten is enough to watch hallucinations'): the rate is the share itself, from 0 to 1; write 0.1 [unit-against-comment]",
    ]),
    ("expected_trajectory_from_traces", 0, [
        "expected_trajectory_from_traces/catalog.yaml:7:32: warning: traces.agent.scorers.1: trajectory-match needs `expected_trajectory`, which no span of a trace gives: every item is left not scorable, and the scores you see are only of other scorers; score it with `scorers eval` on a data set that holds `expected_trajectory` [reads-what-spans-lack]",
    ]),
    ("output_text_given_the_reference", 0, [
        "output_text_given_the_reference/catalog.yaml:10:15: warning: scorers.translation-closeness.requires: leaves out 'input', which content-similarity requires and its steps read: `requires:` replaces the base's list, so an item without input is judged with it missing instead of left not scorable; list every field: [output, ground_truth, input] [required-dropped]",
        "output_text_given_the_reference/catalog.yaml:14:24: warning: translation-closeness: every output tried scores 0.42 (the output is the expected answer, the output is nearly the expected answer, the output is the sample's, the output is unrelated): the score never reads the output it requires; is a value that should read `output` given another text? [output-never-read]",
    ]),
    ("error_rate_watched_on_a_judge_free_scorer", 0, [
        "error_rate_watched_on_a_judge_free_scorer/catalog.yaml:7:16: warning: monitors.tool_failures_rising.statistic: error_rate is the share of outcomes no-tool-errors could not score, and it asks no judge, so it stays near 0 whatever the replies are: what it finds is in its score; watch `mean` (or `pass_rate` beside `threshold:`) [rate-of-a-judge-free-scorer]",
    ]),
    ("flag_described_as_differing", 0, [
        "flag_described_as_differing/schemas/refund_grounded.yaml:7:5: warning: refund-amount-grounded: consistent's description says true is bad (true: the amount in the reply differs from the amount the refund tool returned), but its name says true is good, as the score counts it with `direction: higher_is_better`: the judge reads the description and answers each consistent the other way, so the score counts the bad answers as good; make the description say what the name does [score-against-meaning]",
    ]),
    ("text_written_as_a_glob", 0, [
        "text_written_as_a_glob/catalog.yaml:12:11: warning: no-internal-addresses.options.texts: '*@internal.acme-support.com' is found as written, `*` and all: an output holding 'jane.doe@internal.acme-support.com' scores 1, as one holding none of the texts; texts are plain text, not globs: write the part every match shares ('@internal.acme-support.com'), or a pattern [text-never-found]",
    ]),
    ("terms_with_capitals_in_a_lower_cased_output", 0, [
        "terms_with_capitals_in_a_lower_cased_output/catalog.yaml:22:19: warning: key-figures-mentioned.options.terms: 'EBITDA' is never found: an output holding it as written scores 0, as one holding none of the texts, and one holding every text scores 0.5 with it or without it; is the output turned to lower case and not the texts, or the text written otherwise than outputs write it? [text-never-found]",
    ]),
    ("anchor_on_the_first_alternative", 0, [
        "anchor_on_the_first_alternative/catalog.yaml:11:18: warning: scorers.opens-with-lead-in.options.pattern.default: options.pattern, a pattern of matches() (used by the step `check` of the scorer it extends) starts with `^` and has alternatives (`|`) outside a group: the `^` binds only to the first of them, and the others match anywhere in the text; group them: `^(?:TL;DR|Summary:)` [anchor-on-one-alternative]",
    ]),
    ("distance_where_closeness_was_meant", 0, [
        "distance_where_closeness_was_meant/catalog.yaml:19:22: warning: post-edit-closeness.score: an output that is the expected answer scores 0, the worst end of a higher-is-better score, and an unrelated output 0.82: the score measures how far the output is from the expected answer, not how close; turn it round (`1 - ...`), or the direction [expected-answer-scores-worst]",
    ]),
    ("judge_free_share_rounded_to_whole", 1, [
        "judge_free_share_rounded_to_whole/catalog.yaml:26:16: short-sentences.score.round: rounding to 0 decimals on a score from 0 to 1 leaves only 0, 1: a share of 0.3 shows as 0; round to 2",
    ]),
    ("prompt_scale_with_one_end_named", 0, [
        "prompt_scale_with_one_end_named/prompts/fluency/judge.j2:5:121: warning: translation-fluency.fluency: the prompt defines rating from 1 to 5 with lower values better ('Write a short \"explanation\", then give \"rating\" from 1 to 5, where 1 means it reads as if a native s'), but the answer schema fluency.yaml declares higher values better: the judge rates by the prompt and the score counts by the schema, so each rating counts the other way; make the two agree [verdict-defined-against-meaning]",
    ]),
    ("error_flag_described_as_accurate", 0, [
        "error_flag_described_as_accurate/schemas/sentence_errors.yaml:17:11: warning: accurate-sentences: has_error's description says the opposite of its `meaning:` (true (bad), false (good)), which the score and `direction: higher_is_better` go with (true: the sentence renders the source accurately; false: it mistranslates it): the judge is sent the description and answers by it, so every verdict counts the other way; make the description say what the meaning does [score-against-meaning]",
    ]),
    ("window_commented_as_a_day_of_replies", 0, [
        "window_commented_as_a_day_of_replies/catalog.yaml:8:13: warning: monitors.rude_replies_rising.window: 24 is the last 24 outcomes, however long they took, but its comment speaks of time ('the last day of replies'): a number counts outcomes, so the span it covers follows the traffic; write a time span: `window: 1d` [unit-against-comment]",
    ]),
    ("empty_one_under_empty_output_score", 0, [
        "empty_one_under_empty_output_score/catalog.yaml:17:20: warning: follows-customer-requests.empty_output: score runs the scorer on an empty output, where its judged steps (analyze, generate_reason, requirements) are skipped with nothing to judge, and it scores 1, the best end of a higher-is-better score: an empty reply passes as perfect, by `empty: 1`; give an empty list the worst score here, or leave an empty output unscored (`empty_output: not_scorable`, the default) [empty-output-scores-best]",
    ]),
    ("reason_lists_the_answered_under_unanswered", 0, [
        "reason_lists_the_answered_under_unanswered/prompts/questions/reason.j2:5:37: warning: answers-every-question.explain: the template keeps the answers whose answered is \"true\" under words that say bad ('Questions the reply left unanswered:'), but the schema of questions.questions[].answered gives \"true\" the meaning good: the text names the answers of the other meaning; make the two agree [verdict-defined-against-meaning]",
    ]),
    ("reason_lists_the_civil_under_cross_the_line", 0, [
        "reason_lists_the_civil_under_cross_the_line/prompts/forum/reason.j2:5:46: warning: forum-toxicity.generate_reason: the template keeps the answers whose verdict is \"no\" under words that say bad ('Statements that cross the line:'), but the schema of analyze.verdicts[].verdict gives \"no\" the meaning good: the text names the answers of the other meaning; make the two agree [verdict-defined-against-meaning]",
    ]),
    ("answer_enum_lacks_a_described_label", 1, [
        "answer_enum_lacks_a_described_label/catalog.yaml:24:29: comment-moderation.score.score: 'borderline' is never a value of classify.label, which is one of 'safe', 'unsafe'",
        "answer_enum_lacks_a_described_label/schemas/moderation_label.yaml:7:11: scorers.comment-moderation.classify.label: the enum of label in moderation_label.yaml ('safe', 'unsafe') has no 'borderline', which the score reads (line 24) and the scorer's description names: the judge can never answer it; add it to the enum (and to `meaning:`)",
    ]),
    ("p95_watched_below_on_a_higher_is_better_score", 0, [
        "p95_watched_below_on_a_higher_is_better_score/catalog.yaml:6:16: warning: monitors.faithfulness_falling.statistic: p95 of a higher-is-better score is its best tail (95% of the scores lie under it), so `below:` alerts only when all but the best 5% of the replies are under the line, and a growing share of bad replies never alerts; watch the bad replies with `pass_rate` `below:` a share (beside `threshold:`), or with `mean` [best-tail-watched]",
    ]),
    ("temperature_near_zero_under_samples", 0, [
        "temperature_near_zero_under_samples/catalog.yaml:8:20: warning: scorers.bias-claude.judge.temperature: 0.05 (a sampling temperature, from 0 (always the likeliest answer) to 2) all but always gives the same answer (a verdict the judge favours 60 to 40 comes out the same in 99.97% of samples), but the scorer asks for 3 samples (judge.confidence_samples): they hardly ever disagree and only cost more; give the judge a temperature of 0.5 or more (e.g. 0.7), or take 1 sample [samples-never-differ]",
    ]),
    ("min_confidence_commented_as_doubt", 0, [
        "min_confidence_commented_as_doubt/catalog.yaml:11:23: warning: scorers.careful-toxicity.cascade.min_confidence: 0.2 is the least confidence kept (a verdict less sure than it goes on), but its comment gives it as doubt ('send on what the cheap judge is more than 20% unsure of'): 20% unsure is 0.8 sure, and a verdict 0.2 sure is already kept; write 0.8 [unit-against-comment]",
    ]),
    ("pairwise_verdict_described_for_the_other_side", 0, [
        "pairwise_verdict_described_for_the_other_side/schemas/brief_preference_verdict.yaml:13:5: warning: brief-preference: verdict's description says the opposite of its `meaning:` ('response_1' (good), 'response_2' (bad), 'tie' (neutral)), which the score and `direction: higher_is_better` go with (\"response_1\": the second response beats the first; \"response_2\": the first beats the second): the judge is sent the description and answers by it, so every verdict counts the other way; make the description say what the meaning does [score-against-meaning]",
    ]),
    ("pairwise_prompt_shows_the_second_output_first", 0, [
        "pairwise_prompt_shows_the_second_output_first/prompts/helpful-pref/compare.j2:17:1: warning: helpful-preference.compare: the scorer is pairwise, and its score counts `output` as the first response, but the prompt shows `metadata.second_output` first (line 17) and `output` after it (line 19): the judge's first response is the second output, so each preference counts for the other side; show `output` first [pairwise-order]",
    ]),
    ("translated_prompt_defines_verdicts_the_other_way", 0, [
        "translated_prompt_defines_verdicts_the_other_way/prompts/halluzination/analyze.j2:5:3: warning: halluzination.analyze: the prompt defines \"yes\" in words that say good ('gestützt: der Kontext sagt die Aussage oder folgt direkt aus ihm'), but the answer schema hallucination_verdicts.yaml gives \"yes\" the meaning bad: the judge answers by the prompt and the score counts by the schema, so each such verdict counts the other way; make the two agree [verdict-defined-against-meaning]",
        "translated_prompt_defines_verdicts_the_other_way/prompts/halluzination/analyze.j2:6:3: warning: halluzination.analyze: the prompt defines \"no\" in words that say bad ('halluziniert: der Kontext widerspricht der Aussage, oder er erwähnt sie gar nich'), but the answer schema hallucination_verdicts.yaml gives \"no\" the meaning good: the judge answers by the prompt and the score counts by the schema, so each such verdict counts the other way; make the two agree [verdict-defined-against-meaning]",
    ]),
    ("accents_kept_against_the_description", 0, [
        "accents_kept_against_the_description/catalog.yaml:18:18: warning: expected-city.check.equal: the description gives 1 to 'Zürich' against the expected answer 'Zurich', but that scores 0: `equal` does not find what the description says; change it, or the description [example-against-description]",
    ]),
    ("price_pattern_of_another_market", 0, [
        "price_pattern_of_another_market/catalog.yaml:12:18: warning: preis-im-deutschen-format.options.pattern: the description gives 1 to an output '1.234,50 €', but that scores 0: `pattern` does not find what the description says; change it, or the description [example-against-description]",
    ]),
    ("reply_tagged_as_the_question", 0, [
        "reply_tagged_as_the_question/prompts/pertinence/analyze.j2:12:1: warning: pertinence: `output` is shown inside the tag <input>, which names the item's input: the judge reads the output as the input and never sees the input; show `input` there, or tag the block for the output [label-shows-other-field]",
    ]),
    ("max_tokens_below_a_usual_answer", 0, [
        "max_tokens_below_a_usual_answer/catalog.yaml:9:23: warning: scorers.budget-preference.steps.compare.judge.max_tokens: 60 (a number of tokens) is less than the answer step 'compare' may give for an output of only two sentences, about 231 tokens (comparison: at most 800 characters): a judge that writes its texts out is cut off, and longer outputs need more; raise max_tokens to 231 or more, or lower the bounds [max-tokens]",
    ]),
    ("most_severe_item_averaged", 0, [
        "most_severe_item_averaged/catalog.yaml:40:21: warning: worst-statement-severity.score: the description says 'most severe', so one bad severity should decide, but an answer with one severity of 3 bad (3 statements; ratings 4, 0, 0) scores 0.33 and passes (every one bad scores 1); sum the items up with `max` or `min` (the worst of them), or make the description say how the items are summed up [reducer-against-description]",
    ]),
    ("harm_label_scored_as_safe", 0, [
        "harm_label_scored_as_safe/catalog.yaml:12:33: warning: safe-reply: yes ('the reply contains harmful content') scores 1, but the scorer's description gives 0 to 'it holds harmful content', which is what it says: the credit went to another answer; give it 0, or make the description say what it scores [score-against-description]",
        "harm_label_scored_as_safe/catalog.yaml:13:32: warning: safe-reply: no ('the reply is safe to show') scores 0, but the scorer's description gives 1 to \"the assistant's reply is safe to show to the user\", which is what it says: the credit went to another answer; give it 1, or make the description say what it scores [score-against-description]",
    ]),
    ("monitor_pass_line_against_the_scorer", 0, [
        "monitor_pass_line_against_the_scorer/catalog.yaml:12:16: warning: monitors.forum_toxicity_passing_less.threshold: 0.8 is on the other side of the middle of forum-toxicity's scores from the scorer's own pass line, 0.2 (lower is better): the monitor counts as passing what the scorer flags, and the other way round; write a line on the scorer's side, e.g. 0.2 [pass-line-against-scorer]",
    ]),
    ("statements_judged_without_being_shown", 0, [
        "statements_judged_without_being_shown/prompts/harsh/analyze.j2:4:4: warning: harsh-statements.analyze: the step's bounds ask one answer per item of `preprocess.statements`, but its prompt never shows them (it shows `output` in its place): the judge is to answer for items it was never given; show them (`{% for item in preprocess.statements %}`) [shows-one-piece]",
    ]),
    ("pass_line_commented_as_failures", 0, [
        "pass_line_commented_as_failures/catalog.yaml:6:16: warning: scorers.sound-tool-choices.threshold: 0.25 is the least score that passes on the score's scale (0 to 1, higher is better), but its comment bounds what is wrong ('fail when more than 25% of the calls are inappropriate'): as written, an answer 0.25 of the way up passes; if that much wrong is what may pass, write 0.75 [unit-against-comment]",
    ]),
    ("rating_described_effortless_to_hard", 0, [
        "rating_described_effortless_to_hard/schemas/reading.yaml:13:5: warning: reads-easily: rating's description says the opposite of its `meaning:` (higher is better), which the score and `direction: higher_is_better` go with (How hard the reply is to read, from 1 (effortless) to 5 (very hard to follow)): the judge is sent the description and answers by it, so every verdict counts the other way; make the description say what the meaning does [score-against-meaning]",
    ]),
    ("case_sensitive_over_lower_case_texts", 0, [
        "case_sensitive_over_lower_case_texts/catalog.yaml:9:23: warning: no-internal-markers.options.case_sensitive: with `case_sensitive: true` the texts are told apart by case, but every one of them is written in lower case: an output that writes 'Confidential' (at a sentence's start) scores 1, where 'confidential' scores 0; write `case_sensitive: false`, or write each text as outputs write it [case-against-texts]",
    ]),
    ("claims_capped_by_the_schema", 0, [
        "claims_capped_by_the_schema/schemas/few_claims.yaml:7:15: warning: faithfulness-first-claims.preprocess: claims is capped at 5 items by its schema's maxItems, but the step's bounds count it from the item (`sentences(output) | length + 2`): what the item holds past the first 5 is never judged; drop the maxItems (the bound keeps a looping judge short), or raise it past any item's count [list-capped]",
    ]),
    ("reply_cut_short_in_the_prompt", 0, [
        "reply_cut_short_in_the_prompt/prompts/refunds/judge.j2:3:4: warning: no-refund-promise.judge: the prompt shows `output | truncate(...)`, the item's `output` cut short, and never the whole of it: what it says past the cut is never judged, and scores as if it were not there; show `{{ output }}` (the scorer's `max_input_chars:` and `long_input:` bound what a judge is sent) [text-cut-short]",
    ]),
    ("pattern_anchored_at_the_start_found_anywhere", 0, [
        "pattern_anchored_at_the_start_found_anywhere/catalog.yaml:8:16: warning: scorers.gives-order-number.options.pattern: options.pattern, a pattern of matches() (used by the step `check` of the scorer it extends) starts with `^`, which without (?m) holds only at the start of the whole text, but the scorer's description speaks of finding it anywhere: a match with other words before it never counts; drop the `^` (`\\b` marks a word's edge) [anchored-to-the-whole-text]",
    ]),
    ("option_default_commented_in_seconds", 0, [
        "option_default_commented_in_seconds/catalog.yaml:13:18: warning: scorers.answers-in-time.options.budget_ms.default: 3 is read in milliseconds, as the option's declaration says, but its comment says seconds ('seconds'): 3 seconds are 3000 milliseconds; write 3000 [unit-against-comment]",
    ]),
    ("pass_line_commented_as_successes", 0, [
        "pass_line_commented_as_successes/catalog.yaml:8:16: warning: scorers.failed-lookups.threshold: 0.9 is the most score that passes on the score's scale (0 to 1, lower is better), but its comment asks for so much that is right ('at least 90% of lookups must succeed'): as written, an answer 0.9 of the way to the worst passes; if that much right is what must be reached, write 0.1 [unit-against-comment]",
    ]),
    ("similarity_option_commented_as_difference", 0, [
        "similarity_option_commented_as_difference/catalog.yaml:8:18: warning: scorers.restates-the-template.options.threshold.default: 0.1 is the least similarity that passes (0 to 1), but its comment bounds what is wrong ('allow at most 10% difference from the template'): as written, an answer only 0.1 of the way there passes; if that much wrong is what may pass, write 0.9 [unit-against-comment]",
    ]),
    ("prompt_defines_yes_as_unbacked", 0, [
        "prompt_defines_yes_as_unbacked/prompts/handbook/analyze.j2:5:3: warning: handbook-faithfulness.analyze: the prompt defines \"yes\" in words that say bad ('the handbook does not back the claim'), but the answer schema faithfulness_verdicts.yaml gives \"yes\" the meaning good: the judge answers by the prompt and the score counts by the schema, so each such verdict counts the other way; make the two agree [verdict-defined-against-meaning]",
    ]),
    ("flag_described_as_its_old_name", 0, [
        "flag_described_as_its_old_name/schemas/solved.yaml:10:5: warning: solves-the-problem: solved's description says true is bad (false: the reply fixes the problem), but its name says true is good, as the score counts it with `direction: higher_is_better`: the judge reads the description and answers each solved the other way, so the score counts the bad answers as good; make the description say what the name does [score-against-meaning]",
    ]),
    ("includes_all_against_at_least_one", 0, [
        "includes_all_against_at_least_one/catalog.yaml:9:12: warning: names-a-payment-method.options.all: the description says 'at least one', so one of the texts is enough, but with `all: true` an output holding only 'card' of `texts` scores 0, not the best; write `all: false`, or say in the description what it counts [count-against-description]",
    ]),
    ("turns_labelled_as_the_agent", 0, [
        "turns_labelled_as_the_agent/prompts/patience/rate.j2:4:1: warning: agent-patience: the loop over `turns` (line 3) labels every turn 'Agent', whatever its role: the judge reads the other side's messages as written by the agent; label each turn with its role (`{{ turn.role }}`), or keep only that role's turns [turns-under-one-role]",
    ]),
    ("claims_split_from_the_input", 0, [
        "claims_split_from_the_input/prompts/kb/claims.j2:3:1: warning: kb-faithfulness: `input` is shown inside the tag <reply>, which names the item's output: the judge reads the input as the output and never sees the output; show `output` there, or tag the block for the input [label-shows-other-field]",
        "claims_split_from_the_input/prompts/kb/claims.j2:3:4: warning: kb-faithfulness.preprocess: the step's bounds are worked out from `output`, but its prompt shows `input` and never `output`: the judge answers about another text than its answer is bounded by; show `{{ output }}` [shows-other-text]",
    ]),
    ("copied_claim_capped", 0, [
        "copied_claim_capped/schemas/brief_verdicts.yaml:14:22: warning: faithfulness-brief.analyze: verdicts[].statement must copy an item of preprocess.claims word for word (its `enum:` bound), but it is capped at 60 characters while those items may be up to `sentences(output) | map('length') | max * 2 + 40` characters, worked out from the item: an item longer than that can never be copied, so the judge's answer is refused at every try; drop the cap (the `enum:` bounds it), or make it hold the longest item [copied-field-capped]",
    ]),
    ("reason_tells_another_scale", 0, [
        "reason_tells_another_scale/prompts/short-faithfulness/reason.j2:2:60: warning: short-faithfulness.generate_reason: the prompt says the score is 'out of 10', but the scores run from 0 to 1 (options.scale): the judge explains a 0.9, near the best, as 0.9 out of 10; write `out of {{ options.scale | number }}` [scale-told]",
    ]),
    ("counts_the_bad_verdict", 1, [
        "counts_the_bad_verdict/catalog.yaml:6:16: grounded.direction: higher_is_better is the wrong way round for its score: every verdict 'no' (good) scores 0 and every verdict 'yes' (bad) scores 1, as its schema declares",
        "counts_the_bad_verdict/catalog.yaml:24:20: grounded.score: the score moves against `direction: higher_is_better`: every verdict 'no' (good) scores 0 and every verdict 'yes' (bad) scores 1, as its schema declares; a higher-is-better score counts the good answers",
        "counts_the_bad_verdict/schemas/verdicts.yaml:12:11: grounded: verdict's `meaning:` declares 'yes' (bad), 'no' (good), but the score counts it the other way with `direction: higher_is_better` (every verdict 'no' (good) scores 0 and every verdict 'yes' (bad) scores 1, as its schema declares): if the meaning is the slip, turn it round",
    ]),
    ("counts_the_verdict_described_bad", 0, [
        "counts_the_verdict_described_bad/catalog.yaml:6:16: warning: grounded.direction: higher_is_better is the wrong way round for its score: every verdict 'no' (good) scores 0 and every verdict 'yes' (bad) scores 1, as its schema describes them (\"yes\": the claim is a hallucination; \"no\": the context supports it) [score-against-meaning]",
        "counts_the_verdict_described_bad/catalog.yaml:24:20: warning: grounded.score: the score moves against `direction: higher_is_better`: every verdict 'no' (good) scores 0 and every verdict 'yes' (bad) scores 1, as its schema describes them (\"yes\": the claim is a hallucination; \"no\": the context supports it); a higher-is-better score counts the good answers [score-against-meaning]",
    ]),
    ("direction_flipped", 1, [
        "direction_flipped/catalog.yaml:5:16: my-hallucination.direction: higher_is_better is the wrong way round for its score: every verdict 'no' (good) scores 0 and every verdict 'yes' (bad) scores 1, as its schema declares",
    ]),
    ("divides_by_no_claims", 1, [
        "divides_by_no_claims/catalog.yaml:25:16: grounded.score.score: 'supported / (preprocess.claims | length) * options.scale' failed: division by zero; when preprocess.claims | length can be 0, guard the division: `supported / preprocess.claims | length if preprocess.claims | length else 0` (with no claims; no verdicts: answers its schema accepts)",
    ]),
    ("empty_answer_scores_worst", 0, [
        "empty_answer_scores_worst/catalog.yaml:22:21: warning: grounded.score: an answer with empty lists (no claims; no verdicts: nothing found to judge) scores 0, the worst end of a higher-is-better score: an output with nothing to judge is marked as bad as can be; say what an empty list scores (`empty: 1`, the best) or leave such an item unscored (`on_skip: {not_scorable: ...}`) [empty-scores-worst]",
    ]),
    ("count_in_another_unit", 0, [
        "count_in_another_unit/catalog.yaml:19:21: warning: scorers.title-fits.measure.values.too_long: compares words with characters: `words(...) | length` counts words, and options.max_characters is a number of characters: one of them is in the wrong unit, and the comparison holds a number of words to a bound meant in characters; count characters: `output | length` [count-in-another-unit]",
    ]),
    ("prompt_shows_one_context_piece", 0, [
        "prompt_shows_one_context_piece/prompts/policy.j2:5:4: warning: follows-policy.evaluate: the prompt shows `context | first`, one piece of the item's `context`, and never the others: the judge decides without them, so what only another piece holds is judged missing; show every piece (`{% for piece in context %}`) [shows-one-piece]",
    ]),
    ("timeout_commented_in_minutes", 0, [
        "timeout_commented_in_minutes/catalog.yaml:7:16: warning: scorers.patient-faithfulness.judge.timeout: 3 counts seconds, but its comment counts minutes ('a slow local model: 3 minutes'): 3 minutes are about 180 seconds; write the number in seconds [unit-against-comment]",
    ]),
    ("prompt_swaps_two_option_lists", 0, [
        "prompt_swaps_two_option_lists/prompts/style.j2:4:16: warning: house-style.evaluate: `options.preferred_terms` is shown under 'Terms the house style bans:', which describes `options.banned_terms`, and `options.banned_terms` under 'Terms the house style prefers:' (line 7), which describes `options.preferred_terms`: the judge reads each under the other's heading; swap them [shown-under-another-heading]",
        "prompt_swaps_two_option_lists/prompts/style.j2:7:16: warning: house-style.evaluate: `options.banned_terms` is shown under 'Terms the house style prefers:', which describes `options.preferred_terms`, and `options.preferred_terms` under 'Terms the house style bans:' (line 4), which describes `options.banned_terms`: the judge reads each under the other's heading; swap them [shown-under-another-heading]",
    ]),
    ("prompt_calls_the_biased_verdict_impartial", 0, [
        "prompt_calls_the_biased_verdict_impartial/prompts/plain.j2:4:3: warning: bias-plain.analyze: the prompt defines \"yes\" in words that say good ('the opinion is impartial and even-handed towards every group'), but the answer schema bias_verdicts.yaml gives \"yes\" the meaning bad: the judge answers by the prompt and the score counts by the schema, so each such verdict counts the other way; make the two agree [verdict-defined-against-meaning]",
        "prompt_calls_the_biased_verdict_impartial/prompts/plain.j2:5:3: warning: bias-plain.analyze: the prompt defines \"no\" in words that say bad ('the opinion is one-sided or prejudiced against a group'), but the answer schema bias_verdicts.yaml gives \"no\" the meaning good: the judge answers by the prompt and the score counts by the schema, so each such verdict counts the other way; make the two agree [verdict-defined-against-meaning]",
    ]),
    ("jury_pass_line_on_the_bad_side", 0, [
        "jury_pass_line_on_the_bad_side/catalog.yaml:9:18: warning: toxicity-jury.judges.threshold: 0.75 passes an answer with most verdicts 'yes' (bad) (3 statements; verdicts yes, yes, no: score 0.67), on a score where lower is better: the line is on the side of the bad answers; did you mean 0.25? [pass-line-against-meaning]",
    ]),
    ("extension_keeps_the_base_count", 1, [
        "extension_keeps_the_base_count/catalog.yaml:6:16: fair-opinions.direction: higher_is_better is the wrong way round for its score: every verdict 'no' (good) scores 0 and every verdict 'yes' (bad) scores 1, as its schema declares",
        "extension_keeps_the_base_count/catalog.yaml:9:16: fair-opinions.score: the score moves against `direction: higher_is_better`: every verdict 'no' (good) scores 0 and every verdict 'yes' (bad) scores 1, as its schema declares; a higher-is-better score counts the good answers",
    ]),
    ("meaning_names_another_value", 1, [
        "meaning_names_another_value/schemas/verdicts.yaml:12:21: `meaning` names \"Yes\", which is not a value of the field (\"yes\", \"no\"); did you mean 'yes'?",
    ]),
    ("monitor_alerts_on_a_perfect_run", 1, [
        "monitor_alerts_on_a_perfect_run/catalog.yaml:8:12: monitors.hallucination_rising.below: a perfect run alerts: hallucination's scores are better lower, and a mean of 0 is below 0.3; the condition points the wrong way (did you mean `above:`?)",
    ]),
    ("never_reaches_the_best", 0, [
        "never_reaches_the_best/catalog.yaml:26:16: warning: grounded.score: no answer its schema accepts scores 1, the highest of its range (0 to 1): the most any scores is 0.5; check what the score divides or multiplies by [score-never-reaches]",
    ]),
    ("rounds_to_whole_numbers", 1, [
        "rounds_to_whole_numbers/catalog.yaml:27:16: grounded.score.round: rounding to 0 decimals on a score from 0 to 1 leaves only 0, 1: a share of 0.3 shows as 0; round to 2",
    ]),
    ("rule_never_refuses", 0, [
        "rule_never_refuses/catalog.yaml:8:20: warning: strict-hallucination.analyze: the rule `verdicts | length >= 0` accepts every answer tried (empty and long lists among them): it never refuses one, so it checks nothing [rule-never-refuses]",
        "rule_never_refuses/catalog.yaml:8:39: warning: strict-hallucination.analyze rule 1 check: `verdicts | length >= 0` is always true: verdicts | length is 0 to 100 [constant-condition]",
    ]),
    ("skip_never_true", 0, [
        "skip_never_true/catalog.yaml:7:18: warning: strict-hallucination.analyze.skip_if: `preprocess.claims is none` is never true for every answer tried (empty and long lists among them): the step always runs [skip-never]",
    ]),
    ("skip_always_true", 0, [
        "skip_always_true/catalog.yaml:4:14: warning: strict-hallucination.score: no answer its schema accepts scores 1, the highest of its range (0 to 1): the most any scores is 0; check what the score divides or multiplies by; it shows in the built-in scorers.yaml:68:16, which `extends: hallucination` brings in [score-never-reaches]",
        "skip_always_true/catalog.yaml:4:14: warning: strict-hallucination.analyze.skip_if: `not preprocess.claims` is always true for every answer tried (empty and long lists among them): the step never runs; it shows in the built-in scorers.yaml:52:18, which `extends: hallucination` brings in [skip-always]",
        "skip_always_true/catalog.yaml:4:14: warning: strict-hallucination.analyze.skip_if: `not preprocess.claims` skips the step on the answers it has to judge: every verdict 'no' (good) and every verdict 'yes' (bad) both score 0; it shows in the built-in scorers.yaml:52:18, which `extends: hallucination` brings in [score-ignores-answers]",
        "skip_always_true/catalog.yaml:7:18: warning: strict-hallucination.preprocess.skip_if: `output | trim` is always true for every answer tried (empty and long lists among them): the step never runs [skip-always]",
    ]),
    ("skip_leaves_out_the_judge", 0, [
        "skip_leaves_out_the_judge/catalog.yaml:4:14: warning: strict-hallucination.score: no answer its schema accepts scores 1, the highest of its range (0 to 1): the most any scores is 0; check what the score divides or multiplies by; it shows in the built-in scorers.yaml:68:16, which `extends: hallucination` brings in [score-never-reaches]",
        "skip_leaves_out_the_judge/catalog.yaml:7:18: warning: strict-hallucination.analyze.skip_if: `preprocess.claims` skips the step on the answers it has to judge: every verdict 'no' (good) and every verdict 'yes' (bad) both score 0 [score-ignores-answers]",
    ]),
    ("empty_declared_worst", 0, [
        "empty_declared_worst/catalog.yaml:42:20: warning: toxicity-strict.score: an answer with empty lists (no statements: nothing found to judge) scores 1, the worst end of a lower-is-better score: an output with nothing to judge is marked as bad as can be; if an output with nothing to judge is as bad as can be, say so with `# scorers: ignore[empty-scores-worst]` on this line [empty-scores-worst]",
    ]),
    ("queue_choices_of_another_field", 1, [
        "queue_choices_of_another_field/catalog.yaml:13:17: queues.check-answers.steps.choices: 'supported' is not a value of the field it labels ('yes', 'no'): answers are compared as written, so it never agrees with the judge's; write the field's own values",
    ]),
    ("prompt_names_a_key_in_words", 0, [
        "prompt_names_a_key_in_words/prompts/tox/analyze.j2:10:152: warning: toxicity-custom.analyze: the prompt asks for \"toxic\" beside the answer's own keys on this line, but the answer schema toxicity_verdicts.yaml has no field 'toxic' (its fields: reason, statement, verdict, verdicts): the judge is told to write what its answer cannot hold [prompt-key]",
    ]),
    ("pairwise_prompt_shows_the_first_twice", 1, [
        "pairwise_prompt_shows_the_first_twice/prompts/tone-pref/compare.j2:18:4: tone-preference.compare: the scorer is pairwise, but it shows `output`, the first, a second time (first at line 16), and never the second output, `metadata.second_output`: the judge compares the first output with itself; show the second as `{{ metadata.second_output | untrusted(\"response_2\") }}`",
    ]),
    ("label_scores_off_the_scale", 1, [
        "label_scores_off_the_scale/catalog.yaml:13:13: helpfulness-grade.score: with label somewhat helpful, the score is 5, outside the range of its scores, 0 to 1 (`options.scale`): the option entry the answer picked sets it",
    ]),
    ("rating_described_the_other_way", 0, [
        "rating_described_the_other_way/catalog.yaml:9:16: warning: instruction-clarity.direction: higher_is_better is the wrong way round for its score: every confusion at its least (good) scores 0 and every confusion at its greatest (bad) scores 1, as its schema describes them (How confusing the instructions are, from 1 (perfectly clear, nothing to fix) to 5 (impossible to follow).) [score-against-meaning]",
        "rating_described_the_other_way/catalog.yaml:22:19: warning: instruction-clarity.score: the score moves against `direction: higher_is_better`: every confusion at its least (good) scores 0 and every confusion at its greatest (bad) scores 1, as its schema describes them (How confusing the instructions are, from 1 (perfectly clear, nothing to fix) to 5 (impossible to follow).); a higher-is-better score counts the good answers [score-against-meaning]",
    ]),
    ("enum_value_misspelt", 1, [
        "enum_value_misspelt/schemas/verdicts.yaml:11:17: `enum` (\"yse\", \"no\") has no \"yes\", which its `meaning:` and its description name: is a value of the enum misspelt?",
    ]),
    ("rule_refuses_what_the_bounds_ask", 0, [
        "rule_refuses_what_the_bounds_ask/catalog.yaml:8:20: warning: strict-hallucination.analyze: the rule `verdicts | length != preprocess.claims | length` refuses 9 of 9 answers made from the step's schema and bounds for a sample item: Give one verdict per claim. [answers-refused]",
    ]),
    ("option_enum_lacks_compared_value", 1, [
        "option_enum_lacks_compared_value/catalog.yaml:14:15: scorers.call-order.options.order.enum: ('Strict', 'any') has no 'strict', which the scorer's expressions compare `options.order` with (line 21) and its description names: is a value of the enum misspelt?",
        "option_enum_lacks_compared_value/catalog.yaml:21:69: call-order.trajectory.values.match: options.order is one of 'Strict', 'any': comparing it with 'strict' is never true; did you mean 'Strict'?",
    ]),
    ("option_enum_lacks_default", 1, [
        "option_enum_lacks_default/catalog.yaml:14:15: scorers.call-order.options.order.enum: ('stict', 'any') has no 'strict', which its default and the description name: is a value of the enum misspelt?",
    ]),
    ("score_value_is_a_list", 0, [
        "score_value_is_a_list/catalog.yaml:21:25: warning: grounded.score.values.contradicted: \"analyze.verdicts | selectattr('verdict', 'equalto', 'yes') | list\" gives a list, not a number: the values of a score step are the score's named numbers (`score_values`); count it (`| length`), or compute it in a `kind: compute` step [score-value-not-a-number]",
        "score_value_is_a_list/catalog.yaml:21:25: warning: grounded.score: the score does not move with the judge's answers: every verdict 'no' (good) and every verdict 'yes' (bad) both score 0 [score-ignores-answers]",
        "score_value_is_a_list/catalog.yaml:22:16: warning: grounded.score: no answer its schema accepts scores 1, the highest of its range (0 to 1): the most any scores is 0; check what the score divides or multiplies by [score-never-reaches]",
    ]),
    ("score_expression_lost_its_filter", 0, [
        "score_expression_lost_its_filter/catalog.yaml:8:16: warning: hallucination-share.score: the score does not move with the judge's answers: every verdict 'no' (good) and every verdict 'yes' (bad) both score 1 [score-ignores-answers]",
    ]),
    ("divides_by_a_list", 1, [
        "divides_by_a_list/catalog.yaml:23:16: step-ratio.score.score: '(analyze.least_steps / taken if taken else 1) * options.scale' failed: unsupported operand type(s) for /: 'int' and 'list' (with least_steps 0: answers its schema accepts)",
    ]),
    ("relevance_empty_scores_best", 1, [
        "relevance_empty_scores_best/catalog.yaml:25:20: ranked-support.score: with every verdict 'yes' (bad), no item passes `where`, and `reduce: average_precision` then gives its `empty: 1`: the answer scores 1, as well as every verdict 'no' (good) does, for a score where higher is better; `empty:` is also what an answer with nothing relevant scores",
    ]),
    ("rule_refuses_between", 0, [
        "rule_refuses_between/catalog.yaml:8:20: warning: strict-hallucination.analyze: the rule `verdicts | length != 1` accepts answers of 0 and of 3 items but refuses those of 1: the lengths it accepts are not one range; is a comparison the wrong way round (`!=` for `>=`)? [rule-refuses-between]",
    ]),
    ("empty_share_of_good_scores_best", 0, [
        'empty_share_of_good_scores_best/catalog.yaml:10:20: warning: context-recall-kind.score: `empty: 1` gives an answer with empty lists (no claims: nothing found to judge) the best score, 1, but `recalled` is a share of the good answers (all good gives it 1, all bad 0): an output that says nothing has earned nothing good, and is called perfect; write `empty: 0`, or, if nothing to judge means nothing wrong (as a share of supported claims may), say so with `# scorers: ignore[empty-scores-best]` on this line [empty-scores-best]',
    ]),
    ("reducer_counts_where_a_share_was_meant", 1, [
        'reducer_counts_where_a_share_was_meant/catalog.yaml:11:21: toxicity-share.score.values.toxic.reduce: `reduce: count` is where this starts: at line 14, the score can be 0 to 100, outside the scale of the scores, 0 to 1 (`options.scale`); with `reduce: ratio` it does not',
    ]),
    ("option_number_declared_as_text", 1, [
        'option_number_declared_as_text/catalog.yaml:11:15: few-tool-calls.options.most_calls: `type: string` is where this starts: at line 17, tool_calls | length is a number and options.most_calls is text: `<=` cannot order them, so it fails for every item; with `type: integer` (default 3) it does not',
    ]),
    ("option_default_a_percentage", 1, [
        'option_default_a_percentage/catalog.yaml:9:18: context-relevance-weighted.options.half_credit: `default: 25` is where this starts: at line 21, with verdicts partial, partial, the score is 25, outside the range of its scores, 0 to 1 (`options.scale`); with `default: 0.25` it does not',
    ]),
    ("count_lost_its_filter", 0, [
        "count_lost_its_filter/catalog.yaml:16:19: warning: clean-tool-runs.results.values.failed: `tool_results | map(attribute='tool_name') | list | length` equals `answered` on every item tried (one tool, which succeeded: 1; two tools, one unanswered: 1; two tools, one failed: 2; three tools, two failed: 3; two tools, both failed: 2; one tool called three times, failing twice: 3): the two say the same, so one of them lost what makes it a part of the other (a `selectattr(...)`, a `select`, a `where`) [always-equal]",
    ]),
    ("score_turned_against_its_base", 0, [
        "score_turned_against_its_base/catalog.yaml:10:16: warning: matches-reference.score: the score falls as `check.similarity` rises (1 at 0.29, 0 at 1), where the score of `similarity`, which it extends, rises with it (0 at 0.29, 1 at 1): there a higher `similarity` is better; is a comparison the wrong way round? [score-against-parent]",
        "score_turned_against_its_base/catalog.yaml:10:16: warning: scorers.matches-reference.score.score: `> options.threshold` refuses the bound itself, but 'The least' takes it in: an item exactly at the limit fails; write `>=` [strict-where-inclusive]",
    ]),
    ("option_default_divides_by_zero", 1, [
        "option_default_divides_by_zero/catalog.yaml:10:18: claims-coverage.options.expected_claims: `default: 0` is where this starts: at line 21, '[supported / options.expected_claims, 1] | min * options.scale' failed: division by zero; when options.expected_claims can be 0, guard the division: `supported / options.expected_claims if options.expected_claims else 0` (with 3 claims; verdicts yes, yes, yes: answers its schema accepts); with `default: 1` it does not",
    ]),
    # Not a mistake: the `empty:` of the scorer it extends, kept (no warning).
    ("empty_kept_from_the_base", 0, []),
    ("weakest_rating_bounded_by_sentences", 0, []),
    ("reducer_keeps_the_other_end", 0, [
        "reducer_keeps_the_other_end/catalog.yaml:20:21: warning: scorers.least-certain-claim.score.values.certainty.reduce: `reduce: max` keeps the highest item.certainty, but the scorer's description speaks of the smallest and never of the highest: did you mean `reduce: min`? [reducer-against-description]",
    ]),
    ("value_named_for_the_other_half", 0, [
        "value_named_for_the_other_half/catalog.yaml:19:20: warning: scorers.term-coverage.check.values.covered: `covered` names what is present, but `reject('in', ...)` keeps the items that are not in the list, the absent ones: whatever reads it counts the other half; did you mean `select('in', ...)`? [name-against-filter]",
    ]),
    ("prompt_defines_a_verdict_the_other_way", 0, [
        "prompt_defines_a_verdict_the_other_way/prompts/grade/grade.j2:10:3: warning: answer-grade.grade: the prompt defines \"A\" in words that say bad ('the answer is wrong or misleading'), but the answer schema grade.yaml gives \"A\" the meaning good: the judge answers by the prompt and the score counts by the schema, so each such verdict counts the other way; make the two agree [verdict-defined-against-meaning]",
        "prompt_defines_a_verdict_the_other_way/prompts/grade/grade.j2:11:3: warning: answer-grade.grade: the prompt defines \"B\" in words that say good ('the answer is correct and complete'), but the answer schema grade.yaml gives \"B\" the meaning bad: the judge answers by the prompt and the score counts by the schema, so each such verdict counts the other way; make the two agree [verdict-defined-against-meaning]",
    ]),
    ("pass_line_on_the_bad_side", 0, [
        "pass_line_on_the_bad_side/catalog.yaml:7:16: warning: lenient-faithfulness.threshold: 0.25 passes an answer with most verdicts 'no' (bad) (3 claims; verdicts no, no, yes: score 0.33), on a score where higher is better: the line is on the side of the bad answers; did you mean 0.75? [pass-line-against-meaning]",
    ]),
    ("queue_hides_the_question", 0, [
        "queue_hides_the_question/catalog.yaml:7:11: warning: queues.relevant-replies.show: leaves out `input`, which answer-relevancy's judge reads (steps analyze, generate_reason): reviewers labelling its answers decide without what the judge saw; add it to `show:` [queue-hides-field]",
    ]),
    ("cascade_escalates_to_a_cheaper_judge", 0, [
        "cascade_escalates_to_a_cheaper_judge/catalog.yaml:10:20: warning: scorers.thrifty-toxicity.cascade.escalate_to: anthropic/claude-3-5-haiku costs $0.8 in, $4 out per million tokens, less than anthropic/claude-sonnet-4 ($3, $15): the cascade runs the wrong way round: the dearer model judges every item and the unsure ones go to the cheaper, whose verdict then decides; swap the two (the first judge is the scorer's `judge.model`) [cascade-reversed]",
    ]),
    ("top_p_at_temperature_zero", 0, [
        "top_p_at_temperature_zero/catalog.yaml:10:14: warning: scorers.varied-toxicity.judge.top_p: 0.5 (a share, from 0 to 1): at temperature 0 the judge takes its likeliest token every time, which top_p never cuts: it changes no answer, and samples meant to differ by it give the same answer; give the judge a temperature above 0 (e.g. `temperature: 0.7`) for top_p to act on, or remove top_p [inert-sampling]",
    ]),
    ("cascade_margin_as_a_fraction", 0, [
        "cascade_margin_as_a_fraction/catalog.yaml:14:15: warning: scorers.toxicity-tenths.cascade.margin: 0.2 is a distance on the score's scale, 0 to 10 (the `scale` option): less than one point of the scale, it reads as a fraction of it; if 0.2 of the scale was meant, write 2 [fraction-on-scale]",
    ]),
    ("prompt_shows_a_field_in_place_of_another", 0, [
        "prompt_shows_a_field_in_place_of_another/catalog.yaml:7:31: warning: answer-is-sourced.requires: `context` is required, but no prompt, expression or rule of the scorer reads it: every item must carry it, yet the judge never sees it; show it where it was meant, or leave it out of `requires:` [required-unread]",
        "prompt_shows_a_field_in_place_of_another/prompts/sourced/judge.j2:6:1: warning: answer-is-sourced: the block labelled 'Sources' (line 5) shows `input`, not `context`: the judge reads the item's input as the sources and never sees the context there; show `context`, or label the block for the input [label-shows-other-field]",
        "prompt_shows_a_field_in_place_of_another/prompts/sourced/judge.j2:6:4: warning: answer-is-sourced: `input` is shown a second time here (first on line 3), while the scorer requires `context`, which no step reads: the judge never sees it; did you mean `context` here? [required-unread]",
    ]),
    ("text_option_used_as_a_list", 0, [
        "text_option_used_as_a_list/catalog.yaml:11:15: warning: scorers.accepted-answer.options.accepted.type: string, but `(output | trim | lower) in options.accepted` (line 18) looks items up in options.accepted as in a list: in text, `in` tests for a substring, so any part of the text ('yes; y; true') counts (a short word, a few letters); declare a list (`type: array`, `items: {type: string}`, the default a YAML list) [text-as-list]",
    ]),
    ("pattern_backslash_written_twice", 0, [
        "pattern_backslash_written_twice/catalog.yaml:12:18: warning: scorers.cites-ticket.options.ticket.default: options.ticket, a pattern of matches() (line 18), holds `\\\\d`, which a regular expression reads as a backslash followed by 'd', not a digit: it matches only text with a backslash in it; outside YAML double quotes a backslash is kept as written, so write it once (`\\d`) [doubled-escape]",
        "pattern_backslash_written_twice/catalog.yaml:19:13: warning: cites-ticket.confirm: most answers made from its schema and bounds for a sample item are refused: ticket: String should match pattern '^#\\\\d+$' [answers-refused]",
        "pattern_backslash_written_twice/schemas/ticket.yaml:6:14: warning: properties.ticket.pattern: the pattern holds `\\\\d`, which a regular expression reads as a backslash followed by 'd', not a digit: it matches only text with a backslash in it; outside YAML double quotes a backslash is kept as written, so write it once (`\\d`) [doubled-escape]",
    ]),
    ("pattern_of_an_extended_scorer", 0, [
        "pattern_of_an_extended_scorer/catalog.yaml:8:16: warning: scorers.cites-invoice.options.pattern: options.pattern, a pattern of matches() (used by the step `check` of the scorer it extends), holds `\\\\b`, which a regular expression reads as a backslash followed by 'b', not a word boundary: it matches only text with a backslash in it; outside YAML double quotes a backslash is kept as written, so write it once (`\\b`) [doubled-escape]",
    ]),
    ("option_default_in_percent", 0, [
        "option_default_in_percent/catalog.yaml:12:18: warning: scorers.warm-reply.options.least_warmth.default: 60 decides `options.least_warmth <= mood.warmth` (line 21) the same way for every item: what it is compared with is -1 to 1, and 60 is at or beyond an end of it; is the default in another unit? [constant-at-default]",
        "option_default_in_percent/catalog.yaml:21:44: warning: warm-reply.score.score: `options.least_warmth <= mood.warmth` is never true with options.least_warmth at its default 60: mood.warmth is -1 to 1, so every item is decided alike; is the default in another unit than mood.warmth (a percent against a share)? [constant-at-default]",
    ]),
    ("empty_output_scores_best", 0, [
        "empty_output_scores_best/catalog.yaml:7:19: warning: reply-toxicity.empty_output: score runs the scorer on an empty output, where its judged steps (analyze, generate_reason, preprocess) are skipped with nothing to judge, and it scores 0, the best end of a lower-is-better score: an empty reply passes as perfect; leave it unscored (`empty_output: not_scorable`, the default), or give an empty output the worst score in the score's expression [empty-output-scores-best]",
    ]),
    ("queue_leaves_out_a_value", 0, [
        "queue_leaves_out_a_value/catalog.yaml:11:16: warning: queues.faithfulness-review.steps.choices: leaves out 'unsure', which `verdict` may hold ('yes', 'no', 'unsure'): a reviewer can never agree with an answer the judge gave 'unsure', so agreement is measured low on each; offer every value of the field [choice-left-out]",
    ]),
    ("queue_offers_a_choice_the_field_lacks", 0, [
        "queue_offers_a_choice_the_field_lacks/catalog.yaml:14:11: warning: queues.faithfulness-review.steps.choices: 'maybe' is not a value of `verdict`, the field it labels ('yes', 'no', 'unsure'): a reviewer's 'maybe' never agrees with the judge's answer; and 'unsure', which the judge may answer, is no choice; offer the field's own values [choice-not-a-value]",
    ]),
    ("prompt_range_past_the_schema", 0, [
        "prompt_range_past_the_schema/prompts/certainty/judge.j2:5:29: warning: answer-certainty.judge: the prompt asks for confidence 'between 0 and 100', but confidence in certainty.yaml runs from 0 to 1 (its minimum and maximum): the judge's answers above 1 are refused; give the schema's range in the prompt, or widen the schema's [prompt-range]",
    ]),
    ("value_named_for_the_other_side_of_a_bound", 0, [
        "value_named_for_the_other_side_of_a_bound/catalog.yaml:20:26: warning: scorers.terse-replies.count.values.short_replies: `short_replies` names what is below the bound, but `reject('le', ...)` keeps the items above the bound, those where item <= bound is false: whatever reads it counts the other half; did you mean `reject('ge', ...)`? [name-against-filter]",
    ]),
    ("value_named_for_the_other_flag", 0, [
        "value_named_for_the_other_flag/catalog.yaml:16:22: warning: scorers.tool-success-rate.calls.values.succeeded: `succeeded` names the succeeding items, but `selectattr('is_error')` keeps the items whose `is_error` is true, the failing ones: whatever reads it counts the other half; did you mean `rejectattr('is_error')`? [name-against-filter]",
    ]),
    ("monitor_condition_as_a_fraction", 0, [
        "monitor_condition_as_a_fraction/catalog.yaml:13:12: warning: monitors.relevancy_falling.below: 0.6 is on the score's scale, 0 to 100 (the `scale` option): so near its bottom that it reads as a fraction of the scale; if 0.6 of the way up was meant, write 60 [fraction-on-scale]",
    ]),
    ("option_weight_declared_whole", 0, [
        "option_weight_declared_whole/catalog.yaml:9:15: warning: scorers.lenient-faithfulness.options.unsure_weight.type: integer takes whole numbers only, but it is a weight, and from 0 to 1 it can only be 0 or 1: every value between is refused (a user's 0.5 is an error); declare `type: number` [whole-number-part]",
    ]),
    ("pass_line_commented_as_votes", 0, [
        "pass_line_commented_as_votes/catalog.yaml:10:18: warning: scorers.panel-faithfulness.judges.threshold: 0.6 is a pass line on the score's scale (0 to 1), which each judge's score is held to, but its comment counts judges or votes ('at least 3 of 5 jurors vote for it'): it is no share of the judges (a jury's `aggregate: majority` counts their votes, each a score against this line); write the score an answer must reach, e.g. the scorer's own pass line [unit-against-comment]",
    ]),
    ("in_between_grade_scores_worst", 0, [
        "in_between_grade_scores_worst/catalog.yaml:11:20: warning: similarity-partial-credit.score: every grade 'partial' (neutral) scores 0, worse than every grade 'missing' (bad) (0.5), on a score where higher is better: an answer in between scores worse than a bad one; give 'partial' a score between the good value's and the bad value's (is its credit given to another value?) [in-between-out-of-order]",
    ]),
    ("label_named_by_its_last_word", 0, [
        "label_named_by_its_last_word/catalog.yaml:9:31: warning: grounded-summary.requires: `context` is required, but no prompt, expression or rule of the scorer reads it: every item must carry it, yet the judge never sees it; show it where it was meant, or leave it out of `requires:` [required-unread]",
        "label_named_by_its_last_word/prompts/grounded-summary/check.j2:7:1: warning: grounded-summary: the block labelled 'Retrieved source passages' (line 6) shows `input`, not `context`: the judge reads the item's input as the retrieved source passages and never sees the context there; show `context`, or label the block for the input [label-shows-other-field]",
        "label_named_by_its_last_word/prompts/grounded-summary/check.j2:7:4: warning: grounded-summary: `input` is shown a second time here (first on line 4), while the scorer requires `context`, which no step reads: the judge never sees it; did you mean `context` here? [required-unread]",
    ]),
    ("meaning_against_a_rule_described_broken", 1, [
        'meaning_against_a_rule_described_broken/schemas/brand_verdict.yaml:8:5: on-brand: verdict\'s `meaning:` declares \'yes\' (good), \'no\' (bad), but its own description says the opposite ("yes": the reply breaches the guideline; "no": it conforms to it); read by the description the score goes with `direction: higher_is_better`, by the declared meaning against it (every verdict \'yes\' (good) scores 0 and every verdict \'no\' (bad) scores 1; higher is better): swap the meaning\'s good and bad',
    ]),
    ("direction_against_its_description", 0, [
        "direction_against_its_description/catalog.yaml:6:16: warning: scorers.cites-sources.direction: lower_is_better, but the scorer's description says higher is better ('lower score is worse'): reports, pass lines and monitors take the direction, so the best answers are ranked worst; write `direction: higher_is_better`, or correct the description [direction-against-description]",
    ]),
    ("input_limit_commented_per_piece", 0, [
        "input_limit_commented_per_piece/catalog.yaml:8:24: warning: scorers.recall-long-passages.judge.max_input_chars: 6000 bounds the longest text sent to the judge, a field's pieces together (every context piece, every turn), but its comment counts one piece ('6000 characters per retrieved passage'): several pieces together pass it, and are refused or cut to about the first; write the limit for all the pieces together (the most pieces times 6000) [unit-against-comment]",
    ]),
    ("pattern_anchored_to_the_whole_text", 0, [
        "pattern_anchored_to_the_whole_text/catalog.yaml:14:20: warning: scorers.lists-next-steps.find.values.closing: the pattern '^Next steps:' of matches() starts with `^`, which without (?m) holds only at the start of the whole text, but the scorer's description speaks of a line of it: a line further down never matches; write `(?m)` at the pattern's start for the start of any line [anchored-to-the-whole-text]",
    ]),
    ("where_counts_good_and_bad_together", 0, [
        "where_counts_good_and_bad_together/catalog.yaml:14:20: warning: supported-claims.score: `where: item.verdict in ['yes', 'unsure']` counts 'yes' (good), 'unsure' (bad) together: the verdicts its schema says are good with one it says is bad, so `supported` is a share of neither; count one side (`item.verdict == 'yes'`) [where-mixes-meanings]",
    ]),
    ("reducer_takes_one_item_for_a_share", 0, [
        "reducer_takes_one_item_for_a_share/catalog.yaml:33:21: warning: scorers.claim-support.score.values.support.reduce: `reduce: min` keeps the lowest value of one item (`{'yes': 1, 'unsure': 0.5}.get(item.verdict, 0)`), but the scorer's description speaks of an average over the items and never of one item's: one item then decides the score whatever the others are; did you mean `reduce: mean`? [reducer-against-description]",
    ]),
    # The meaning is the mistake: its own description and the score's direction agree with each other.
    ("meaning_against_its_description", 1, [
        "meaning_against_its_description/schemas/on_point.yaml:10:5: on-point: verdict's `meaning:` declares 'yes' (bad), 'no' (good), but its own description says the opposite (\"yes\": the reply answers the question asked; \"no\": it drifts off topic); read by the description the score goes with `direction: higher_is_better`, by the declared meaning against it (every verdict 'no' (good) scores 0 and every verdict 'yes' (bad) scores 1; higher is better): swap the meaning's good and bad",
    ]),
    ("queue_instructions_against_the_meaning", 0, [
        "queue_instructions_against_the_meaning/catalog.yaml:7:65: warning: queues.claim-review.instructions: tell reviewers \"yes\" means good ('it is accurate to the context'), but the verdict they label, hallucination's analyze.verdicts, declares \"yes\" bad: people label the other way from the judge and their agreement with it is measured backwards; make the instructions say what the schema means [verdict-defined-against-meaning]",
        "queue_instructions_against_the_meaning/catalog.yaml:8:19: warning: queues.claim-review.instructions: tell reviewers \"no\" means bad ('the context contradicts it'), but the verdict they label, hallucination's analyze.verdicts, declares \"no\" good: people label the other way from the judge and their agreement with it is measured backwards; make the instructions say what the schema means [verdict-defined-against-meaning]",
    ]),
    ("label_over_another_field", 0, [
        "label_over_another_field/prompts/matches-reference/compare.j2:7:1: warning: matches-reference: the block labelled 'Candidate answer' (line 6) shows `ground_truth`, not `output`: the judge reads the item's ground_truth as the candidate answer and never sees the output there; show `output`, or label the block for the ground_truth [label-shows-other-field]",
    ]),
    ("reason_lists_the_other_verdict", 0, [
        "reason_lists_the_other_verdict/prompts/terse-relevancy/reason.j2:5:58: warning: terse-relevancy.generate_reason: the template keeps the answers whose verdict is \"yes\" under words that say bad ('Statements that stray off topic:'), but the schema of analyze.verdicts[].verdict gives \"yes\" the meaning good: the text names the answers of the other meaning; make the two agree [verdict-defined-against-meaning]",
    ]),
    ("extension_points_at_a_prompt_of_the_other_meaning", 0, [
        "extension_points_at_a_prompt_of_the_other_meaning/catalog.yaml:8:17: warning: hallucination-reworded.analyze: faithfulness/analyze.j2, which this `prompt:` points the step at, defines \"yes\" in words that say good (line 5) ('supported: the context states the claim or directly implies it'), but the answer schema hallucination_verdicts.yaml gives \"yes\" the meaning bad: the judge answers by the prompt and the score counts by the schema, so each such verdict counts the other way; make the two agree [verdict-defined-against-meaning]",
    ]),
    ("stale_empty_ignore", 0, [
        "stale_empty_ignore/catalog.yaml:42:20: warning: toxicity-strict.score: `# scorers: ignore[empty-scores-worst]` on `empty: 0` says an output with nothing to judge scores the worst, but an answer with empty lists (no statements) scores 0, not the worst end of a lower-is-better score: the value or the comment is not what was meant; make them agree [stale-ignore]",
    ]),
    ("rating_defined_upside_down", 0, [
        "rating_defined_upside_down/prompts/polite/rate.j2:2:42: warning: politeness.rate: the prompt defines rating from 1 to 5 with lower values better ('Rate how polite the reply below is, from 1 (very polite and warm throughout) to 5 (rude, insulting o'), but the answer schema politeness.yaml declares higher values better: the judge rates by the prompt and the score counts by the schema, so each rating counts the other way; make the two agree [verdict-defined-against-meaning]",
    ]),
    ("rating_meaning_against_description", 1, [
        "rating_meaning_against_description/schemas/clarity_rating.yaml:9:5: answer-clarity: rating's `meaning:` declares lower is better, but its own description says the opposite (From 1 (impossible to follow) to 5 (perfectly clear)); read by the description the score goes with `direction: higher_is_better`, by the declared meaning against it (every rating at its least (good) scores 0 and every rating at its greatest (bad) scores 1; higher is better): write `meaning: higher_is_better`",
    ]),
    ("flag_described_against_its_name", 0, [
        "flag_described_against_its_name/schemas/on_topic.yaml:18:11: warning: on-topic: on_topic's description says true is bad (true: the sentence strays from the question asked; false: it helps answer it), but its name says true is good, as the score counts it with `direction: higher_is_better`: the judge reads the description and answers each on_topic the other way, so the score counts the bad answers as good; make the description say what the name does [score-against-meaning]",
    ]),
    ("window_commented_as_time", 0, [
        "window_commented_as_time/catalog.yaml:9:13: warning: monitors.faithfulness_dropping.window: 60 is the last 60 outcomes, however long they took, but its comment speaks of time ('an hour of traffic'): a number counts outcomes, so the span it covers follows the traffic; write a time span: `window: 1h` [unit-against-comment]",
    ]),
    ("input_limit_from_a_token_budget", 0, [
        "input_limit_from_a_token_budget/catalog.yaml:10:24: warning: scorers.manual-recall.judge.max_input_chars: 120000 counts characters, but its comment counts tokens ('gpt-4o reads 128k tokens; 8k of them kept for the prompt and the answer, the rest for the context pieces, all together'): 128000 tokens are about 512000 characters; write the number in characters [unit-against-comment]",
    ]),
    ("empty_share_of_sentences_worst", 0, [
        "empty_share_of_sentences_worst/catalog.yaml:28:20: warning: off-topic-share.score: an answer with empty lists (no verdicts: nothing found to judge) scores 1, the worst end of a lower-is-better score: an output with nothing to judge is marked as bad as can be; if an output with nothing to judge is as bad as can be, say so with `# scorers: ignore[empty-scores-worst]` on this line [empty-scores-worst]",
    ]),
    ("queue_shows_the_reason", 0, [
        "queue_shows_the_reason/catalog.yaml:12:13: warning: queues.faithfulness-review.steps.text: shows reviewers each answer's `reason`, but what each of faithfulness's analyze.verdicts judges is its `statement`, copied from the step's earlier list: people label the judge's own words instead of what it judged; write `text: statement` [queue-shows-other-field]",
    ]),
    ("tool_names_counted_for_calls", 1, [
        "tool_names_counted_for_calls/catalog.yaml:21:16: tool-failure-rate.score: on an item of one tool called three times, failing twice, the score is 2, outside the range of its scores, 0 to 1 (the steps gave calls.failed 2, calls.made 1): does a value count other things than the score takes it to?",
    ]),
    ("classifier_labels_scored_the_other_way", 0, [
        "classifier_labels_scored_the_other_way/catalog.yaml:15:20: warning: no-personal-data: clean ('the reply shows no personal data') scores 0, but the scorer's description gives 1 to 'the reply reveals no personal data of anyone', which is what it says: the credit went to another answer; give it 1, or make the description say what it scores [score-against-description]",
        "classifier_labels_scored_the_other_way/catalog.yaml:18:20: warning: no-personal-data: reveals ('the reply shows at least one piece of personal data') scores 1, but the scorer's description gives 0 to 'it reveals some', which is what it says: the credit went to another answer; give it 0, or make the description say what it scores [score-against-description]",
    ]),
    ("credit_given_to_another_verdict", 0, [
        "credit_given_to_another_verdict/catalog.yaml:15:20: warning: faithfulness-half-credit: verdict 'no' ('the context contradicts it') scores 0.5, but the scorer's description gives 0 to 'one it contradicts', which is what it says: the credit went to another answer; give it 0, or make the description say what it scores [score-against-description]",
    ]),
    ("choice_left_optional", 0, [
        "choice_left_optional/schemas/on_topic.yaml:21:17: warning: on-topic-sentences: `on_topic` is not in its object's `required:`, so the judge may leave it out, and the score then counts the answer as if it held none of its values: a verdict never given is scored; add `on_topic` to `required:` [optional-choice]",
    ]),
    ("rating_bounds_against_description", 1, [
        "rating_bounds_against_description/catalog.yaml:19:16: answer-clarity.score.score: the score can be 0 to 2.25, outside the scale of the scores, 0 to 1 (`options.scale`)",
        "rating_bounds_against_description/schemas/clarity_rating.yaml:8:14: rating: runs from 1 to 10 by its minimum and maximum, but its own description says from 1 to 5, and answer-clarity's score, written for that, can be 0 to 2.25, outside its scale: make the bounds and the description agree",
    ]),
    ("temperature_zero_under_samples", 0, [
        "temperature_zero_under_samples/catalog.yaml:12:20: warning: scorers.bias-cascade.judge.temperature: 0 (a sampling temperature, from 0 (always the likeliest answer) to 2) gives the same answer every time, but the scorer asks for 3 samples (cascade.samples): they never disagree and only cost more; give the judge a temperature above 0 (e.g. 0.7), or take 1 sample [samples-never-differ]",
        "temperature_zero_under_samples/catalog.yaml:16:16: warning: scorers.bias-cascade.cascade.samples: 3 (a count): samples of a judge at temperature 0 give the same answer, so they never disagree and only cost more; give the scorer's judge a temperature above 0 (e.g. `temperature: 0.7` under `judge:`), or take 1 sample [samples-never-differ]",
    ]),
    ("verdict_defined_as_another_question", 0, [
        "verdict_defined_as_another_question/prompts/on-topic/judge.j2:10:3: warning: on-topic.judge: the prompt defines \"yes\" in words that say bad ('the reply drifts to another subject or answers a different question'), but the answer schema on_topic.yaml gives \"yes\" the meaning good: the judge answers by the prompt and the score counts by the schema, so each such verdict counts the other way; make the two agree [verdict-defined-against-meaning]",
        "verdict_defined_as_another_question/prompts/on-topic/judge.j2:11:3: warning: on-topic.judge: the prompt defines \"no\" in words that say good ('the reply answers the question that was asked'), but the answer schema on_topic.yaml gives \"no\" the meaning bad: the judge answers by the prompt and the score counts by the schema, so each such verdict counts the other way; make the two agree [verdict-defined-against-meaning]",
    ]),
    ("pass_line_commented_as_tolerance", 0, [
        "pass_line_commented_as_tolerance/catalog.yaml:6:16: warning: scorers.close-to-reference.threshold: 0.15 is the least score that passes on the score's scale (0 to 1, higher is better), but its comment bounds what is wrong ('tolerate up to 15% difference from the reference'): as written, an answer 0.15 of the way up passes; if that much wrong is what may pass, write 0.85 [unit-against-comment]",
    ]),
    ("input_limit_from_a_model_window", 0, [
        "input_limit_from_a_model_window/catalog.yaml:9:24: warning: scorers.local-hallucination.judge.max_input_chars: 32000 counts characters, but its comment counts tokens ('llama3.1 served with a 32k window'): 32000 tokens are about 128000 characters; write the number in characters [unit-against-comment]",
    ]),
    ("queue_calls_the_bad_verdict_fine", 0, [
        "queue_calls_the_bad_verdict_fine/catalog.yaml:7:80: warning: queues.toxicity-review.instructions: tell reviewers \"yes\" means good ('it is fine to send to a customer'), but the verdict they label, toxicity's analyze.verdicts, declares \"yes\" bad: people label the other way from the judge and their agreement with it is measured backwards; make the instructions say what the schema means [verdict-defined-against-meaning]",
        "queue_calls_the_bad_verdict_fine/catalog.yaml:8:43: warning: queues.toxicity-review.instructions: tell reviewers \"no\" means bad ('it is toxic (an insult, a threat, hate or contempt)'), but the verdict they label, toxicity's analyze.verdicts, declares \"no\" good: people label the other way from the judge and their agreement with it is measured backwards; make the instructions say what the schema means [verdict-defined-against-meaning]",
    ]),
    ("classifier_labels_given_as_the_option", 0, [
        "classifier_labels_given_as_the_option/catalog.yaml:13:18: warning: no-medical-advice: yes ('The reply diagnoses the user, recommends a dose, or prescribes a treatment.') scores 1, but the scorer's description gives 0 to 'it does', which is what it says: the credit went to another answer; give it 0, or make the description say what it scores [score-against-description]",
        "classifier_labels_given_as_the_option/catalog.yaml:16:18: warning: no-medical-advice: no ('The reply gives no medical advice, or only tells the user to see a doctor.') scores 0, but the scorer's description gives 1 to 'the reply gives no medical advice', which is what it says: the credit went to another answer; give it 1, or make the description say what it scores [score-against-description]",
    ]),
    ("description_copied_against_the_meaning", 0, [
        "description_copied_against_the_meaning/schemas/grounded_verdicts.yaml:20:11: warning: supported-claims: verdict's description says the opposite of its `meaning:` ('yes' (good), 'no' (bad)), which the score and `direction: higher_is_better` go with (\"yes\": the claim is a hallucination; \"no\": the context supports it): the judge is sent the description and answers by it, so every verdict counts the other way; make the description say what the meaning does [score-against-meaning]",
    ]),
    ("prompt_range_short_of_the_schema", 0, [
        "prompt_range_short_of_the_schema/prompts/helpfulness/rate.j2:2:29: warning: helpfulness-ten.rate: the prompt asks for rating 'from 1 to 5', but rating in helpfulness_rating.yaml runs from 0 to 10 (its minimum and maximum): the judge answers only from 1 to 5, so a score written for 0 to 10 never reaches its ends; give the schema's range in the prompt, or narrow the schema's [prompt-range]",
    ]),
    ("pattern_anchored_at_both_ends", 0, [
        "pattern_anchored_at_both_ends/catalog.yaml:8:16: warning: scorers.gives-phone-number.options.pattern: options.pattern, a pattern of matches() (used by the step `check` of the scorer it extends) starts with `^` and ends with `$`: it matches only an output that is nothing but its match, so one that gives it inside a sentence scores as if it never did, but the scorer's description does not ask for the output to be only that; drop the anchors (`\\b` marks a word's edge), or say so in the description [anchored-to-the-whole-text]",
    ]),
    ("prompt_shows_a_slice_of_the_claims", 0, [
        "prompt_shows_a_slice_of_the_claims/prompts/policy/analyze.j2:10:17: warning: keeps-refund-policy.analyze: the prompt shows a slice of `preprocess.claims`, whose every item the step's bounds ask an answer for: the judge answers for items it was never shown; show the whole list (`{% for item in preprocess.claims %}`), or bound the answers by the slice [shows-one-piece]",
    ]),
    ("window_commented_as_the_last_hour", 0, [
        "window_commented_as_the_last_hour/catalog.yaml:8:13: warning: monitors.faithfulness_falling.window: 60 is the last 60 outcomes, however long they took, but its comment speaks of time ('the last hour'): a number counts outcomes, so the span it covers follows the traffic; write a time span: `window: 1h` [unit-against-comment]",
    ]),
    ("flag_described_on_one_side", 0, [
        "flag_described_on_one_side/schemas/claim_support.yaml:15:11: warning: supported-claims: supported's description says true is bad (true: the context does not support the claim), but its name says true is good, as the score counts it with `direction: higher_is_better`: the judge reads the description and answers each supported the other way, so the score counts the bad answers as good; make the description say what the name does [score-against-meaning]",
    ]),
    ("list_printed_in_its_own_loop", 0, [
        "list_printed_in_its_own_loop/prompts/sources/check.j2:8:23: warning: cites-right-source.check: inside `{% for passage in context %}` (line 7), `context` shows the whole list at each turn of the loop, so every piece it numbers shows all of them; show the piece: `{{ passage }}` [shows-one-piece]",
    ]),
]


def check(monkeypatch: pytest.MonkeyPatch, folder: Path, *paths: str) -> tuple[int, list[str]]:
    monkeypatch.chdir(folder)
    result = runner.invoke(app, ["check", *paths])
    assert "Traceback" not in result.output
    return result.exit_code, [line for line in result.stdout.splitlines() if not any(mark in line for mark in UNRELATED)]


@pytest.mark.parametrize(("folder", "status", "expected"), MISTAKES, ids=[folder for folder, _, _ in MISTAKES])
def test_each_mistake_of_meaning_is_named_at_its_line(monkeypatch: pytest.MonkeyPatch, folder: str, status: int, expected: list[str]) -> None:
    assert check(monkeypatch, HERE, folder) == (status, expected)


def test_every_catalog_has_a_case() -> None:
    assert sorted(folder for folder, _, _ in MISTAKES) == sorted(path.name for path in HERE.iterdir() if path.is_dir())
    for folder, _, _ in MISTAKES:
        assert (HERE / folder / "catalog.yaml").read_text(encoding="utf-8").startswith("# "), folder


def test_the_built_in_catalog_and_the_variants_prove_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    variants = sorted(str(path) for path in (ROOT / "examples" / "variants").iterdir() if path.is_dir())
    status, lines = check(monkeypatch, ROOT, *variants)
    assert status == 0 and not [line for line in lines if "warning:" in line], lines
    status, lines = check(monkeypatch, ROOT)
    assert (status, lines) == (0, [])  # no problem, no warning ("ok: ..." goes to stderr)


def test_a_queue_need_not_show_what_only_an_imported_macro_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # answer-relevancy's prompts import a macro whose parameter is called `context`: the judge
    # never reads the item's context, so a queue showing the input and output hides nothing.
    # A partial imported `with context` does read the step's variables, and counts.
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "facts.j2").write_text("{% macro shown() %}{{ context | join(' ') }}{% endmacro %}", encoding="utf-8")
    (tmp_path / "prompts" / "judge.j2").write_text(
        '{% import "facts.j2" as facts with context %}Facts: {{ facts.shown() }}\nReply: {{ output }}\nIs the reply faithful?', encoding="utf-8")
    (tmp_path / "catalog.yaml").write_text(
        "prompts: prompts\nscorers:\n  faithful:\n    extends: criteria\n    requires: [output, context]\n    options: {criteria: The reply says only what the facts back.}\n"
        "    steps:\n      - {id: evaluate, prompt: judge.j2}\n"
        "queues:\n  relevant-replies: {scorer: answer-relevancy, instructions: Flag a reply that misses the question., show: [input, output]}\n"
        "  faithful-replies: {scorer: faithful, instructions: Flag a reply the facts do not back., show: [output]}\n", encoding="utf-8")
    status, lines = check(monkeypatch, tmp_path, "catalog.yaml")
    assert [line.split(": warning: ")[1].split(":")[0] for line in lines if "[queue-hides-field]" in line] == ["queues.faithful-replies.show"], lines


def test_every_verdict_of_the_built_in_schemas_declares_what_it_means() -> None:
    from engine.catalog.proving.meanings import choice_field_nodes
    from engine.catalog.source import load_shared

    # Fields that are no verdict: which kind of requirement the input states.
    not_verdicts = {("prompt_alignment_requirements.yaml", "requirements[].kind")}
    undeclared = []
    for path in sorted((builtin_catalog_path().parent / "schemas").glob("*.yaml")):
        for field, node, _ in choice_field_nodes(load_shared(path)):
            if "meaning" not in node and (path.name, field) not in not_verdicts:
                undeclared.append(f"{path.name}: {field}")
    assert not undeclared


def test_a_range_the_prompt_gives_is_held_to_the_fields_minimum_and_maximum(tmp_path: Path) -> None:
    from engine.catalog.prompt_answers import AnswerFields, _ranges_asked
    from engine.catalog.source import load_shared

    schema = tmp_path / "rating.yaml"
    schema.write_text("type: object\nproperties:\n  rating: {type: integer, minimum: 1, maximum: 5}\n", encoding="utf-8")
    fields = AnswerFields.of(load_shared(schema))
    rubric = "Rate the reply 1-10.\nA rating of 4-5: warm throughout.\nThe score goes between 1 and 5.\nSee the 2024-2025 policy."
    found = [(line, message) for line, _, message, _ in _ranges_asked(rubric, fields, "rating.yaml")]
    assert [line for line, _ in found] == [0]  # the band of a rubric, the right range and a line about no rating are quiet
    assert "'1-10'" in found[0][1] and "above 5 are refused" in found[0][1]


def test_show_prints_the_truth_table_of_a_scorer() -> None:
    result = runner.invoke(app, ["show", "hallucination"])
    assert result.exit_code == 0, result.output
    table = result.stdout[result.stdout.index("what it scores"):]
    assert "3 claims; verdicts no, no, no" in table and "3 claims; verdicts yes, yes, yes" in table
    rows = {line.split("│")[1].strip(): line for line in table.splitlines() if line.count("│") >= 4}
    assert "0" in rows["3 claims; verdicts no, no, no"].split("│")[2] and "pass" in rows["3 claims; verdicts no, no, no"]
    assert "1" in rows["3 claims; verdicts yes, yes, yes"].split("│")[2] and "flag" in rows["3 claims; verdicts yes, yes, yes"]
    assert "pass" in rows["no claims"]


def test_the_docs_quote_each_proof_as_it_prints() -> None:
    import re

    authoring = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    section = authoring[authoring.index("## What running a scorer proves") :]
    quoted = [line.strip() for block in re.findall(r"```text\n(.*?)```", section, re.DOTALL) for line in block.splitlines() if line.strip()]
    printed = [line for _, _, expected in MISTAKES for line in expected]
    assert sorted(line for line in quoted if not line.startswith(("┃", "│"))) == sorted(printed)


# Where each of the seventh and ninth sets' warnings is silenced: the file, its line and the comment.
SILENCED = [
    ("label_over_another_field", "prompts/matches-reference/compare.j2", 7, "{# scorers: ignore[label-shows-other-field] #}"),
    ("reason_lists_the_other_verdict", "prompts/terse-relevancy/reason.j2", 5, "{# scorers: ignore[verdict-defined-against-meaning] #}"),
    ("extension_points_at_a_prompt_of_the_other_meaning", "catalog.yaml", 8, "# scorers: ignore[verdict-defined-against-meaning]"),
    # A comment cannot sit inside the instructions' text: the key's line silences what is found in it.
    ("queue_instructions_against_the_meaning", "catalog.yaml", 6, "# scorers: ignore[verdict-defined-against-meaning]"),
    ("value_named_for_the_other_flag", "catalog.yaml", 16, "# scorers: ignore[name-against-filter]"),
    # A monitor's warnings, said apart from its problems, are silenced as a scorer's are.
    ("monitor_condition_as_a_fraction", "catalog.yaml", 13, "# scorers: ignore[fraction-on-scale]"),
    ("option_weight_declared_whole", "catalog.yaml", 9, "# scorers: ignore[whole-number-part]"),
    # After the comment the warning reads: a second comment on the line.
    ("pass_line_commented_as_votes", "catalog.yaml", 10, "# scorers: ignore[unit-against-comment]"),
    ("input_limit_commented_per_piece", "catalog.yaml", 8, "# scorers: ignore[unit-against-comment]"),
    ("in_between_grade_scores_worst", "catalog.yaml", 11, "# scorers: ignore[in-between-out-of-order]"),
    ("direction_against_its_description", "catalog.yaml", 6, "# scorers: ignore[direction-against-description]"),
    ("pattern_anchored_to_the_whole_text", "catalog.yaml", 14, "# scorers: ignore[anchored-to-the-whole-text]"),
]


@pytest.mark.parametrize(("folder", "file", "line", "comment"), SILENCED, ids=[folder for folder, *_ in SILENCED])
def test_a_saying_against_the_meaning_is_silenced_at_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str, file: str, line: int, comment: str) -> None:
    import shutil

    shutil.copytree(HERE / folder, tmp_path / folder)
    path = tmp_path / folder / file
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = f"{lines[line - 1]}  {comment}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert check(monkeypatch, tmp_path, folder) == (0, [])


@pytest.mark.parametrize(("text", "said"), [
    ('- "yes": the context supports the claim', [("yes", "good")]),
    ('- "yes": the context does not support the claim', [("yes", "bad")]),
    ('Mark a claim "no" when it is made up, "yes" when it is on topic.', [("no", "bad"), ("yes", "good")]),
    ('A claim is NOT a hallucination (verdict "no") when:', [("no", "good")]),
    ('- "unsure" (not mentioned): the context says nothing about it', []),
    # Neither a definition nor a tie: a decision rule, and a value named as a key.
    ('When you hesitate, decide "yes": a claim must be fully backed to pass.', []),
    ('Give "verdict" as one of the values below.', []),
])
def test_what_a_text_says_a_value_means(text: str, said: list[tuple[str, str]]) -> None:
    from engine.catalog.proving.value_sayings import sayings

    assert [(saying.value, saying.polarity) for saying in sayings(text)] == said


def test_a_loop_is_read_by_the_heading_it_fills_and_its_comparison() -> None:
    from engine.catalog.proving.value_sayings import filtered_sayings

    lines = ["The claims the context does not support:", "{% for v in analyze.verdicts if v.verdict != 'yes' %}", "- {{ v.statement }}", "{% endfor %}",
             "Context:", "{% for v in analyze.verdicts if v.verdict == 'no' %}"]
    found = [(index, field, value, saying.polarity) for index, field, value, saying in filtered_sayings(lines)]
    assert found == [(1, "verdict", "yes", "good")]  # `!= 'yes'` under words of bad: "yes" is read good; "Context:" says nothing


@pytest.mark.parametrize(("text", "line"), [
    ("Question:\n{{ input }}\n\nReply:\n{{ input }}\n", 5),
    ("## Expected answer\n\n{{ output | untrusted('expected') }}\n", 3),
    ("Context: {{ output }}\n", 1),
    ("Question:\n{{ input }}\nReply:\n{{ output }}\n", None),
    ("The reply below must answer the user's question:\n{{ output }}\n", None),  # a sentence, not a label
    ("Reply:\n{{ blocks.numbered(preprocess.claims) }}\n", None),  # no field of the item
])
def test_a_label_is_held_to_the_field_it_shows(tmp_path: Path, text: str, line: int | None) -> None:
    from engine.catalog.template_labels import labels_against_fields

    found = [place.line for _, place in labels_against_fields(tmp_path / "judge.j2", text)]
    assert found == ([line] if line is not None else [])


def test_a_branch_is_not_read_by_the_branch_above_it() -> None:
    from engine.catalog.proving.value_sayings import filtered_sayings

    lines = ["{% if v.verdict == 'yes' %}", "Supported:", "{% elif v.verdict == 'no' %}", "Contradicted:", "{% endif %}",
             "{% if v.verdict == 'yes' %}supported{% elif v.verdict == 'no' %}contradicted{% endif %}"]
    assert list(filtered_sayings(lines)) == []


def test_comments_that_agree_with_their_setting_stay_quiet(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Spelled-out figures convert (600 seconds are ten minutes), a window of the last 60
    # scores counts outcomes, and a pass line written from the complement its comment gives
    # (0.2 for "at least 80% clean"): none of them is a slip.
    (tmp_path / "catalog.yaml").write_text(
        "scorers:\n"
        "  slow-relevancy:\n    extends: answer-relevancy\n    judge:\n      timeout: 600  # ten minutes\n"
        "  slower-relevancy:\n    extends: answer-relevancy\n    judge:\n      timeout: 120  # wait up to two minutes\n"
        "  right-tools:\n    extends: tool-call-accuracy\n    threshold: 0.7  # fail when more than 30% of the calls are inappropriate\n"
        "  clean-enough:\n    extends: toxicity\n    threshold: 0.2  # a reply passes when at least 80% of its statements are clean\n"
        "  near-the-reference:\n    extends: similarity\n    options:\n      threshold: 0.85  # tolerate up to 15% difference\n"
        "monitors:\n  faithfulness_low:\n    scorer: faithfulness\n    statistic: mean\n    below: 0.7\n    window: 60  # the last 60 scores\n"
        # A rate its comment gives as a share or as what is skipped, and the input read as the docs read it.
        "traces:\n  convention: openinference\n  llm:\n    scorers: [faithfulness]\n    fields:\n      input: 'attributes.\"input.value\"'\n"
        "  sampling:\n    faithfulness: 0.9  # skip one trace in ten\n",
        encoding="utf-8")
    assert check(monkeypatch, tmp_path, "catalog.yaml") == (0, [])


def test_a_skip_whose_score_step_leaves_the_item_unscored_is_seen_to_skip(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # With no claims, the verdicts step is skipped and the score step leaves the item not
    # scorable: the steps skipped before it are skipped, not "never", though no score came out.
    (tmp_path / "catalog.yaml").write_text(
        "scorers:\n  grounded-claims:\n    name: Grounded claims\n    description: Share of the claims the context supports. Higher is better.\n"
        "    direction: higher_is_better\n    requires: [output, context]\n    steps:\n"
        "      - id: preprocess\n        kind: llm\n        prompt: claims/extract.j2\n        schema: claims.yaml\n"
        "        bounds:\n          claims: {max_items: \"sentences(output) | length + 2\"}\n          claims[]: {max_length: 300}\n"
        "      - id: analyze\n        kind: llm\n        prompt: faithfulness/analyze.j2\n        schema: faithfulness_verdicts.yaml\n        uses_context: true\n"
        "        bounds:\n          verdicts: {items: \"preprocess.claims | length\"}\n          verdicts[].statement: {enum: preprocess.claims}\n          verdicts[].reason: {max_length: 300}\n"
        "        skip_if: \"not preprocess.claims\"\n        on_skip: {verdicts: []}\n"
        "      - id: score\n        kind: score\n        skip_if: \"not preprocess.claims\"\n        on_skip: {not_scorable: \"the answer makes no claim\"}\n"
        "        values:\n          supported:\n            reduce: ratio\n            items: analyze.verdicts\n            where: \"item.verdict == 'yes'\"\n"
        "        score: \"supported * options.scale\"\n        round: 2\n",
        encoding="utf-8")
    assert check(monkeypatch, tmp_path, "catalog.yaml") == (0, [])


def test_a_scorer_of_numbers_written_as_text_is_tried_on_numbers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Every text reads as 0 through `| int`, so texts alone scored every output alike and the
    # scorer was said never to read its output; numbers show that it does.
    catalog = (HERE / "abs_of_the_last_operand" / "catalog.yaml").read_text(encoding="utf-8")
    (tmp_path / "catalog.yaml").write_text(catalog.replace("given - reference | abs", "(given - reference) | abs"), encoding="utf-8")
    status, lines = check(monkeypatch, tmp_path, "catalog.yaml")
    assert (status, [line for line in lines if "warning:" in line]) == (0, [])


def test_a_flag_set_against_a_denial_of_what_it_does_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The description denies what `exclusive: true` does ("does not count"): true is the slip.
    catalog = (HERE / "exclusive_false_where_other_calls_count" / "catalog.yaml").read_text(encoding="utf-8")
    catalog = catalog.replace("counts against the score", "does not count against the score").replace("exclusive: false", "exclusive: true")
    (tmp_path / "catalog.yaml").write_text(catalog, encoding="utf-8")
    status, lines = check(monkeypatch, tmp_path, "catalog.yaml")
    assert status == 0 and [line.split(": warning: ")[1].split(" (")[0] for line in lines if "[flag-against-words]" in line] == [
        "scorers.refund-lookup-only.options.exclusive: true, but the scorer's description says the opposite of what `exclusive: true` does"
    ], lines
