# IPython kernel configuration installed into the project's environment by `make setup`
# (as .venv/etc/ipython/ipython_kernel_config.py): inline figures are stored as PNG at twice
# the figure's dpi and shown at its size, so that they stay sharp on high-density screens.
c = get_config()  # noqa: F821
c.InlineBackend.figure_formats = {"retina"}
