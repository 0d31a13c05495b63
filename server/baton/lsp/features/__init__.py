"""Feature handlers, one module per area; each validates, calls the service, dumps."""
