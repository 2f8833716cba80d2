"""Every figure a user sees of a run: aggregates, intervals and paired comparisons (`stats`),
and agreement with human labels (`agreement`). The CLI, the report and the workbench read
them from here, so they cannot disagree."""
