"""Per-test time limits shared by the project's lit configurations."""


def time_limit(lit_config, config, group, limit):
    """At most two tests of `group` at a time (the machines have 2 cores), each
    within `limit` seconds: lit's own limit when psutil is there; otherwise the
    returned prefix (`timeout`) bounds every program run."""
    lit_config.parallelism_groups[group] = 2
    config.parallelism_group = group
    supported, why = lit_config.maxIndividualTestTimeIsSupported
    if supported:
        if not lit_config.maxIndividualTestTime:
            lit_config.maxIndividualTestTime = limit
        return ""
    lit_config.note("per-test timeout unavailable (%s); wrapping runs in `timeout %d`"
                    % (why, limit))
    return "timeout -k 10 %d " % limit
