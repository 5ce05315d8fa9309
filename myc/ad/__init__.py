"""Automatic differentiation by source transformation (reverse and forward mode)."""
