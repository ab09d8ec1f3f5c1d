"""Which fields each MCP tool takes. Every field a tool lists changes its answer (tests/mcp/test_fields.py calls
every tool with each of its fields); a field it does not take is refused with an error that names it, never
silently ignored.

The question types' argument models carry more than a caller should send: the chat's follow-up bookkeeping and
what the reader noted about the message (HIDDEN), and, since most of them extend the public workload, workload
fields their engine does not read (NOT_TAKEN: a training search's budget and clouds for a tool that sizes one
setup, say). Both are left out of the tool's input schema and refused in a call.
"""

from __future__ import annotations

from collections.abc import Iterable

# Set by the chat's routing from the message, never by a caller: the question type kept for follow-ups, another
# reading to mention, a workload found in a knowledge question, what the question asked (which the chat's first line
# answers), what the message named or left out, and the frame's setup (the flat workload fields say it to a caller), and
# a billing saving with no job (`billing_of`: a caller asks the catalog tool's breakeven or spot), and the post's setups
# for the diagnosis's causes that need no model size (`general`, built from the frame). (A field
# with one allowed value, the workload's `kind: training`, is left out too: service/mcp/server.py.)
HIDDEN = frozenset({"question", "also", "applied", "asked", "engine_asked", "model_named", "gpu_assumed",
                    "engine_assumed", "mentions_bf16", "setup", "billing_of", "general", "fp8_as_bf16"})
# The instance search's fields: they choose and cost instances, so only the tools that search read them.
SEARCH = frozenset({"budget_cny", "budget_period", "deadline_hours", "clouds", "gpu_include", "gpu_exclude",
                    "billing", "objective"})
BUDGET = frozenset({"budget_cny", "budget_period"})
# The dataset's size: hours and cost, not memory.
DATA = frozenset({"samples", "avg_tokens_per_sample", "tokens", "dataset_gb", "epochs"})
# A serving plan's rental fields: one GPU type sized without renting reads none of them.
RENTAL = frozenset({"clouds", "billing", "objective", "budget_cny"})

# tool -> (fields it does not take, what to use instead)
NOT_TAKEN: dict[str, tuple[frozenset[str], str]] = {
    "estimate": (SEARCH, "estimate sizes one setup on one GPU type; plan searches and costs instances"),
    "check_feasibility": (BUDGET, "check_feasibility answers whether it fits; plan checks a budget"),
    "compare_options": (BUDGET | {"deadline_hours"}, "compare_options sets the options side by side by cost or "
                        "hours; plan checks a budget and a deadline"),
    "find_min_gpus": (SEARCH | {"gpu_count"}, "find_min_gpus counts GPUs of one type; plan searches instances"),
    "capacity": (SEARCH | DATA, "capacity sizes the GPUs' limit, not a job's hours or cost; plan does"),
    # the cause model's server inputs: read only with the chat's frame setup (not an MCP field), so never over MCP
    "diagnose": (SEARCH | {"served", "load"}, "diagnose checks the run that happened; plan searches instances, and "
                 "a server's run is the `serving` field"),
    "size_inference": (RENTAL, "size_inference sizes one GPU type without renting it; plan_serving rents"),
}


def refused(tool: str, given: Iterable[str], listed: Iterable[str]) -> tuple[list[str], str]:
    """The fields of a call the tool does not take, and what to do instead."""
    allowed = set(listed)
    wrong = sorted(name for name in given if name not in allowed)
    if not wrong:
        return [], ""
    instead = NOT_TAKEN.get(tool, (frozenset(), ""))
    why = instead[1] if any(name in instead[0] for name in wrong) else ""
    return wrong, why
