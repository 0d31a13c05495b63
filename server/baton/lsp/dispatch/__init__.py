"""From a JSON-RPC message to a handler and back: routes checked against the contract, registration,
errors, progress.
"""
