"""From a JSON-RPC message to a handler and back: every method registered in one place,
routes checked against the contract, errors, progress.
"""
