"""The public front end: pytree-aware wrappers over the flat core (Autodidax's split)."""
