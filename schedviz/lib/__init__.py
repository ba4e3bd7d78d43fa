"""Small helpers with no models and no Django imports."""
