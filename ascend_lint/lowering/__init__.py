"""Lowering kernels through the Ascend compiler front end, for the compile gate and
`ascend-lint compile`: `kernel_loading` loads a kernel from its file, with the imports
that fail on this machine stood in, when its module does not import.
"""
