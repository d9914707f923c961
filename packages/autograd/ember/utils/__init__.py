"""ember.utils: data loading (ember.utils.data)."""
