"""What a run leaves behind: traces, their replay, the run log and its recorder, and the outcomes
of eval cases and replay checks."""
