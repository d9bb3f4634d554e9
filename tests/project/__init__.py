"""The project itself: the architecture's arrows and sizes, the packaging, the README's promises."""
