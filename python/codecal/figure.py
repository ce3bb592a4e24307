"""Figure bytes that Jupyter shows inline: `bytes` with a display hook.

Not here: drawing. The engine draws (`codecal::report`); these only tell
IPython which image type the bytes are.
"""


class SvgBytes(bytes):
    """An SVG document, shown inline by Jupyter."""

    def _repr_svg_(self):
        return self.decode("utf-8")


class PngBytes(bytes):
    """A PNG image, shown inline by Jupyter."""

    def _repr_png_(self):
        return bytes(self)
