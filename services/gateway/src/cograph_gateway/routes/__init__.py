"""REST controllers, one module per resource."""
