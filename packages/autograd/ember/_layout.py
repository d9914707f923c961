"""Tensor layouts: ``ember.strided`` (every dense tensor) and
``ember.sparse_coo``.  A layout is a str subclass, so that comparing with
the plain name ('strided') keeps working."""


class layout(str):
    __slots__ = ()

    def __repr__(self):
        return f"ember.{str.__str__(self)}"

    __str__ = __repr__


strided = layout("strided")
sparse_coo = layout("sparse_coo")
