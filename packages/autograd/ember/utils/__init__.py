"""ember.utils: data loading (ember.utils.data) and C extensions (ember.utils.ffi)."""
