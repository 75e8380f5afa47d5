"""scaledown package."""
