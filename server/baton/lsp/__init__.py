"""The language-server edge: protocol glue between JSON-RPC and the core.

Sub-packages: transport (framing, stdio / TCP / WebSocket, access), dispatch (routes, registry,
errors, progress), features (the handlers), session_document (render, diagnostics, code actions,
hover). May import: core and the contract; core never imports this package.
"""
