"""Bytes to messages and back: Baton's frame reader, the TCP and WebSocket servers, the network
token, process tuning.
"""
