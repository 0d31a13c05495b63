"""The service: the facade every front end calls, each open session's runtime, the one event
per change, auto-compact in the background, the model access.

May import: every other folder of core (it is the top of core)."""
