"""What else decides a plan's verdicts besides its questions, looks and margin: written into every new plan file,
so no later code change re-reads an old plan (vitcore.stats.plans).

    test_images      the test set's term in test accuracy's interval (vitcore.stats.testset): TEST_IMAGES
    replication      the rule that says replicated / contradicted / not confirmed (vitcore.stats.replication)
    family_sizes     each question's family size m, in question order (the registry's when the plan was made)
    discovery_seeds  a confirmation's fixed-sample discovery (questions its confirmed plan does not ask): exactly
                     these random seeds, [first, last] (absent: the confirmed plan's random seeds)
    code_version     vitcore's version and git commit when the plan was made (a record; nothing reads it)

The two committed plans (the built-in one and `confirm`) predate these fields: absent, each reads as today's
default (the values above), so their files and hashes stay as registered. A value this code does not implement
is refused, never read as something else. No pandas, no TensorFlow.
"""

from __future__ import annotations

from vitcore.stats.plan_json import PlanError

TEST_IMAGES = "counted where every pair kept predictions"
REPLICATION = "vitcore-1: same claim decided replicates; an excluded claim contradicts"
SETTINGS = ("test_images", "replication", "family_sizes", "discovery_seeds", "code_version")
MAX_FAMILY = 1_000


def read(data: dict) -> dict:
    """The SETTINGS a plan file holds, checked: only the rules this code implements, m and seeds as whole numbers."""
    out = {}
    for name, allowed in (("test_images", TEST_IMAGES), ("replication", REPLICATION)):
        if name in data and data[name] != allowed:
            raise PlanError(f"{name} {data[name]!r:.80} is not a rule this code implements (allowed: {allowed!r})")
        out[name] = data.get(name)
    sizes, seeds = data.get("family_sizes", []), data.get("discovery_seeds")
    if not isinstance(sizes, list) or not all(type(m) is int and 1 <= m <= MAX_FAMILY for m in sizes) or \
            (sizes and len(sizes) != len(data.get("questions") or ())):
        raise PlanError(f"family_sizes is a whole number from 1 to {MAX_FAMILY:,} per question, in question order")
    if seeds is not None and not (isinstance(seeds, list) and len(seeds) == 2 and all(type(x) is int for x in seeds)
                                  and 0 <= seeds[0] <= seeds[1] <= 2**31 - 1):
        raise PlanError("discovery_seeds is [first, last], whole numbers from 0, first <= last")
    version = data.get("code_version", "")
    if not isinstance(version, str) or len(version) > 80 or not version.isascii() or not version.isprintable():
        raise PlanError("code_version is printable ASCII text of at most 80 characters")
    return {**out, "family_sizes": tuple(sizes), "discovery_seeds": tuple(seeds) if seeds else None,
            "code_version": version}
