"""The module each layer class reports (``cls.__module__``): PyTorch's
(torch.nn.modules.linear.Linear -> ember.nn.modules.linear.Linear), so a
pickled whole model names the same module paths in either library."""


def publish(module_name, namespace, names):
    for name in names:
        namespace[name].__module__ = module_name
