"""The service: the facade every front end calls, its upkeep after each change, the model access.

May import: every other folder of core (it is the top of core)."""
