"""Lowering kernels the way triton-ascend does, and reading what comes out.

One place for the compiler side, shared by the pytest gate (``pytest_plugin/gate.py``),
``ascend-lint compile`` (``compile_command.py``) and the IR confirmation of static
findings (``pytest_plugin/confirm.py``):

* ``kernel_loading`` loads a kernel from its file, with the imports that fail on this
  machine stood in, when its module does not import;
* ``client.WorkerClient`` starts and talks to ``worker`` (``python -m
  ascend_lint.lowering.worker``), a process that imports triton and lowers each new
  specialisation through the stages it is asked for (``worker.STAGES``);
* ``diagnosis`` and ``codegen_errors`` turn what the compiler raises into one finding
  with a kernel line (``diagnosis.shown_path`` prints a path the way the report does);
* ``mlir`` reads MLIR text: ops and regions, definitions, the kernel argument a memref
  views, ``loc(...)`` frames;
* ``ir_facts.parse`` reads the facts the static rules predict from the ``ttadapter``
  output (strided and discrete accesses, runtime branches in loops, unaligned rows,
  integer vector ops, the core mix), ``grid_use.grid_use`` how the TTIR uses the grid,
  and ``ub_verdict.estimate`` bounds the Unified Buffer a specialisation needs.
"""
