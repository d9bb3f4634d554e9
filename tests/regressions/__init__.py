"""Regressions: behaviours a review broke on purpose or a user tripped on, each pinned by a test
that fails when it breaks."""
