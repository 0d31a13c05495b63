"""Feature handlers, one module per area; each validates, calls the service's public methods,
dumps. The standard LSP features are `Feature` entries, registered with the rest by
lsp/dispatch/registry.py."""
