"""Optimization of typed graphs: rewrites to a fixpoint, then fusion grouping."""
