"""Fetchers: turn a (batch of) index into a (collated) batch."""


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if getitems else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.it = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = \
            auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.it))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.it)
        return self.collate_fn(data)


def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
    cls = _MapFetcher if kind == "map" else _IterableFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
