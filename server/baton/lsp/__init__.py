"""The language-server edge: protocol glue between JSON-RPC and the core."""
