"""The differ's result model and errors, used by both differs and the renderers. Uses
``delta.model`` only."""
