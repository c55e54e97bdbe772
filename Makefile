# The two commands of the README:
#   make book   - set everything up, execute every notebook, write _build/html
#   make test   - set everything up, run lint, unit tests, nbval on every notebook, the -W site
#                 build (rendering the outputs nbval just verified), the browser check and the
#                 launch check (Binder, Colab and pip in fresh environments), and print the
#                 time of each part
# Everything else here is a step of those two. `make test` does not need `make book` first.

SHELL  := /bin/bash
# One thread per process for torch and BLAS, everywhere: the notebooks' stored outputs are
# computed so (the last digits of some float results depend on the number of threads), and
# two test workers with two threads each would share two cores four ways. tests/conftest.py and
# tools/run_notebook.py set the same when run by hand.
export OMP_NUM_THREADS := 1
# Python keeps the bytecode of each module it imports, written once into the environment (the
# set-up installs without compiling, below). Where the environment sets PYTHONDONTWRITEBYTECODE,
# every process (each notebook's kernel, each test worker) would compile torch, SymPy and
# matplotlib from source again: about 5 s of CPU per process.
unexport PYTHONDONTWRITEBYTECODE
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
JB_FLAGS := -W -n --keep-going --all

.PHONY: book test setup lint unit durations site-check browser-check launch-check pdf clean atlas sweep site-bench _part

# Byte-compiling is left to Python's first import of each module: it compiles what is used,
# not every file of torch, SciPy and Sphinx (it took twice the install's time).
$(STAMP): requirements.txt pyproject.toml package.json package-lock.json tools/ipython_kernel_config.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3" > /dev/null
	mkdir -p $(VENV)/etc/ipython && cp tools/ipython_kernel_config.py $(VENV)/etc/ipython/
	npm ci --omit=dev --no-audit --no-fund --silent
	rm -rf _mathjax && mkdir -p _mathjax && cp -r node_modules/mathjax/es5 _mathjax/mathjax
	touch $(STAMP)

setup: $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build $(JB_FLAGS) .
	if command -v xelatex > /dev/null; then $(MAKE) pdf; else echo "No TeX: the site's PDF (book.pdf) was not built; see the README"; fi

lint: $(STAMP)
	$(BIN)/ruff check lsa_lib tests benchmarks tools book _ext site_theme
	$(BIN)/ruff format --check lsa_lib tests benchmarks tools book _ext site_theme

# Unit tests and nbval together on two workers; each test file or notebook is one unit of
# work, handed out longest first (tests/conftest.py, from tests/durations.json).
UNIT := CI=true $(BIN)/python -m pytest -n 2 --dist loadfile -m "not browser and not launch"
unit: $(STAMP)
	$(UNIT)

# Refresh the seconds of each test file and notebook that balance the workers.
durations: $(STAMP)
	LSA_DURATIONS=write $(UNIT) -q

# The test build renders the outputs stored in the notebooks (which nbval has just checked
# against a fresh execution) instead of executing everything a second time. The copy sits
# next to _config.yml because Jupyter Book resolves local extension paths from the config's folder.
NOEXEC := _config_noexec.yml
$(NOEXEC): _config.yml
	sed 's/execute_notebooks: force/execute_notebooks: "off"/' _config.yml > $@

site-check: $(STAMP) $(NOEXEC)
	$(BIN)/jupyter-book build $(JB_FLAGS) --config $(NOEXEC) .

# The PDF renders the committed (nbval-verified) outputs; needs Debian's TeX (see README).
# It is part of the website (book.pdf, linked from every page): `make book` builds it, and the
# site build copies it in when it exists; `make test` does not run LaTeX.
pdf: $(STAMP) $(NOEXEC)
	$(BIN)/jupyter-book build --all --builder pdflatex --config $(NOEXEC) .
	test ! -d _build/html || cp _build/latex/book.pdf _build/html/book.pdf
	@echo "PDF: _build/latex/book.pdf"

# Weight, requests and Lighthouse scores of the built site (benchmarks/bench_site.py; needs
# the devDependencies of package.json, i.e. Lighthouse).
site-bench: $(STAMP)
	npm ci --no-audit --no-fund --silent
	$(BIN)/python benchmarks/bench_site.py --before benchmarks/results/site-before.json

# Every page in headless Chromium, the pages shared by two workers (one browser each).
browser-check: $(STAMP)
	CI=true $(BIN)/python -m pytest -n 2 --dist load -m browser tests/test_site_browser.py tests/test_claims.py tests/test_moved.py

# Fresh environments built from the readers' files alone: Binder's, a Colab-like runtime where the
# chapters' set-up cell installs lsa_lib from a local clone, and `pip install .` (see the tests),
# built in parallel from one shared wheelhouse.
launch-check: $(STAMP)
	$(BIN)/python -m pytest -n 3 --dist load -m launch --basetemp=_build/launch-tmp tests/test_launch.py

# The test command. The machine's cores are kept busy by running parts side by side: the
# unit tests (two workers, their output shown), and beside them the launch check (mostly
# unpacking and waiting for kernels) and the site build, then, once the site is built, the
# browser check (it reads only the built site). Every part's output goes to
# _build/test/<part>.log, its result and time are printed as it ends and again at the end, a
# failed part's log ends the output, and a failed part fails the command after every part has run.
TESTLOG := _build/test
PARTS := lint unit site-check browser-check launch-check
test: $(STAMP)
	@mkdir -p $(TESTLOG) && rm -f $(TESTLOG)/*.rc
	@echo "[make test] $$(nproc --all) cores; load average $$(cut -d' ' -f1-3 /proc/loadavg)"
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory _part PART=launch-check SHOW=no & \
	{ $(MAKE) --no-print-directory _part PART=site-check SHOW=no; \
	  $(MAKE) --no-print-directory _part PART=browser-check SHOW=no; } & \
	for part in lint unit; do \
	  $(MAKE) --no-print-directory _part PART=$$part SHOW=yes; \
	done; \
	wait; \
	echo "[make test] the command took $$(( $$(date +%s) - start )) s; load average $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	fail=0; for part in $(PARTS); do \
	  read rc secs < $(TESTLOG)/$$part.rc; [ "$$rc" = 0 ] || fail=1; \
	  printf '[make test] %-13s %5s s  %s\n' $$part $$secs "$$([ "$$rc" = 0 ] && echo ok || echo "FAILED: see $(TESTLOG)/$$part.log")"; \
	done; \
	for part in site-check browser-check launch-check; do \
	  read rc secs < $(TESTLOG)/$$part.rc; [ "$$rc" = 0 ] && continue; \
	  echo "[make test] the end of $(TESTLOG)/$$part.log:"; tail -n 60 $(TESTLOG)/$$part.log; \
	done; exit $$fail

# One part of `make test`: its output logged (and shown, with SHOW=yes), its status and seconds kept.
_part:
	@start=$$(date +%s.%N); \
	if [ "$(SHOW)" = yes ]; then \
	  $(MAKE) --no-print-directory $(PART) 2>&1 | tee $(TESTLOG)/$(PART).log; rc=$${PIPESTATUS[0]}; \
	else \
	  $(MAKE) --no-print-directory $(PART) > $(TESTLOG)/$(PART).log 2>&1; rc=$$?; \
	fi; \
	secs=$$(python3 -c "import time; print(round(time.time() - $$start))"); \
	echo "$$rc $$secs" > $(TESTLOG)/$(PART).rc; \
	echo "[make test] $(PART): $$([ $$rc = 0 ] && echo ok || echo FAILED) in $$secs s (load average $$(cut -d' ' -f1 /proc/loadavg))"

# The data of the website's interactive pages (the atlas of dimensions and the rotatable
# Figure 1), computed by lsa_lib and committed; not part of `make test`, whose unit tests
# re-certify a sample of it.
atlas: $(STAMP)
	$(BIN)/python tools/make_atlas.py
	$(BIN)/python tools/make_umbrella.py

# The sweep of the rules beyond the atlas (lsa_lib.sweep): 20,000 certified architectures on a
# Dask LocalCluster of this machine, resumable (finished shards are kept in site_data/sweep).
# SWEEP_ARGS passes options: `make sweep SWEEP_ARGS="--scheduler tcp://host:8786"` runs it on an
# existing cluster, `--workers N` sets the local workers; then `tools/check_rules.py` records
# every rule's counts for the ledger.
SWEEP_ARGS ?=
sweep: $(STAMP)
	$(BIN)/python -m lsa_lib.sweep --out site_data/sweep $(SWEEP_ARGS)
	$(BIN)/python tools/check_rules.py

clean:
	rm -rf _build $(NOEXEC)
