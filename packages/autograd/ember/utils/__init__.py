"""ember.utils: data loading (ember.utils.data), C extensions
(ember.utils.ffi), training loops with plugins (ember.utils.trainer) and
Lua Torch files (ember.utils.serialization)."""
