"""Tokens and budget: the offline estimator, model windows, the usage and its thresholds.

May import: conversation and core's shared modules."""
