"""The skeleton shared by the AD transforms: a map from primal graphs to their images.

Both J (reverse) and F (forward) give every primal graph reachable from a root an image
graph, nested like the primal (the image of a closure is nested in the image of its
parent), and fill the images' bodies parents first, so free variables already have
images when a nested graph is built.  The enclosing scopes of a transformed closure are
*outside*: they stay primal, and their nodes are the closure's free-variable values.
"""

from __future__ import annotations

from myc.ir.manager import Manager
from myc.ir.nodes import Graph


class GraphTransform:
    """Subclasses set ``prefix`` and implement ``build_graph(g, image)``."""

    prefix = "T"

    def __init__(self, root: Graph):
        self.outside = frozenset(root.ancestors())
        self.mng = Manager(root, stop=self.outside)
        self.images: dict[Graph, Graph] = {}
        self.pending: list[Graph] = []
        self.built: set[Graph] = set()

    def transform(self, root: Graph) -> Graph:
        image = self.image(root)
        while self.pending:
            self.build(self.pending.pop(0))
        return image

    def image(self, g: Graph) -> Graph:
        """The image of ``g`` (created empty, built later); outside graphs map to themselves."""
        if g in self.outside:
            return g
        img = self.images.get(g)
        if img is None:
            parent = self.image(g.parent) if g.parent is not None else None
            img = Graph(f"{self.prefix}:{g.name}", parent, g.loc)
            img.kind = g.kind
            self.images[g] = img
            self.pending.append(g)
        return img

    def build(self, g: Graph) -> None:
        if g in self.built:
            return
        if g.parent is not None and g.parent not in self.built and g.parent not in self.outside:
            self.build(g.parent)
        self.built.add(g)
        self.build_graph(g, self.images[g])

    def build_graph(self, g: Graph, image: Graph) -> None:  # pragma: no cover - abstract
        raise NotImplementedError
