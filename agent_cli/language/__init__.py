"""What customers' words mean, read in one place: the intent model and its labelled corpus.
Imports only `domain/`, `core/` and the shared base."""
