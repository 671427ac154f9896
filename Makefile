# dynindex — PGXS build.  `make run` and `make test` are the README's two commands;
# they work on a fresh machine (they install what is missing first).

EXTENSION   = dynindex
MODULE_big  = dynindex
DATA        = sql/dynindex--0.1.sql sql/dynindex--0.1--0.2.sql sql/dynindex--0.2--0.3.sql
DOCS        =

SRCS        = $(sort $(wildcard src/*.c src/common/*.c src/types/*.c src/expr/*.c \
                src/catalog/*.c src/storage/*.c src/indexes/*.c src/worker/*.c src/api/*.c \
                src/write/*.c src/streams/*.c src/partiql/*.c src/backup/*.c src/security/*.c \
                src/metrics/*.c src/throttle/*.c src/history/*.c src/exchange/*.c src/replication/*.c))
OBJS        = $(SRCS:.c=.o)
# every object depends on every header (PGXS tracks no header dependencies)
DYN_HEADER_FILES = $(wildcard src/*.h src/*/*.h)

PG_CPPFLAGS = -I$(srcdir)/src -I$(includedir)
# import/export: S3 through libcurl (src/exchange/s3.c)
SHLIB_LINK  += -lcurl
# zlib and libzstd: compressed import files (src/exchange/import_read.c)
SHLIB_LINK  += -lz -lzstd
# global tables: region connection strings parsed by libpq (src/replication/regions.c)
SHLIB_LINK  += -lpq
# -Wno-clobbered: GCC 14 (Debian 13) warns of locals in functions inlined into one
# with PG_TRY that are never live across the longjmp; PostgreSQL's own build has no
# -Wextra and so never sees it.
PG_CFLAGS   = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
              -Wno-sign-compare -Wno-cast-function-type -Wno-clobbered

# ':=' (and no $(srcdir), not yet set here: PGXS builds in the source tree) so that
# PGXS's `ifdef REGRESS` / `ifdef ISOLATION` are false when there are no tests.
REGRESS     := $(basename $(notdir $(wildcard sql/[0-9]*.sql)))
REGRESS_OPTS = --temp-config=$(srcdir)/test/dynindex.conf --temp-instance=$(srcdir)/tmp_check \
               --load-extension=dynindex
ISOLATION     := $(basename $(notdir $(wildcard test/isolation/specs/*.spec)))
ISOLATION_OPTS = --temp-config=$(srcdir)/test/dynindex.conf --temp-instance=$(srcdir)/tmp_check_iso \
                 --inputdir=$(srcdir)/test/isolation --outputdir=output_iso --load-extension=dynindex
TAP_TESTS    = 1
# PROVE_TESTS=test/t/130_x.pl in the environment runs one TAP test (test/bin/suites.sh)
PROVE_TESTS  ?= test/t/*.pl
# Test databases in UTF8 with C collation, whatever the caller's locale.
ENCODING     = UTF8
NO_LOCALE    = 1
EXTRA_CLEAN  = tmp_check tmp_check_iso output_iso results regression.diffs regression.out log

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)

# PGXS (pgxs.mk ships with the client package; the server headers it needs come
# from postgresql-server-dev-15, which `make run`/`make test` install first)
ifneq ($(wildcard $(PGXS)),)
include $(PGXS)

$(OBJS): $(DYN_HEADER_FILES)

# The gateway: a separate program, a libpq client of the extension.
GATEWAY     = src/gateway/dynindex-gateway
# local.c and bgworker.c belong to dynindex_http (below), not to the program.
GATEWAY_SRC = $(filter-out src/gateway/local.c src/gateway/bgworker.c,$(wildcard src/gateway/*.c))
ifneq ($(GATEWAY_SRC),)
all: $(GATEWAY)
$(GATEWAY): $(GATEWAY_SRC) $(wildcard src/gateway/*.h)
	$(CC) -O2 -g -Wall -Wextra -Werror -o $@ $(GATEWAY_SRC) \
	  -I$(shell $(PG_CONFIG) --includedir) -L$(shell $(PG_CONFIG) --libdir) \
	  $(shell pkg-config --cflags --libs libmicrohttpd) -lpq -lcrypto -lz -lpthread
install: install-gateway
install-gateway: $(GATEWAY)
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) $(GATEWAY) '$(DESTDIR)$(bindir)/dynindex-gateway'
EXTRA_CLEAN += $(GATEWAY)

# dynindex_http: the gateway's HTTP layer in background workers inside the
# server (docs/gateway.md "Inside PostgreSQL"), a module of its own so that
# only servers that load it link libmicrohttpd.  The gateway's pool, standby
# routing and program entry are replaced by local.c and bgworker.c.
# -Bsymbolic: the module's own functions are never resolved to the server's.
HTTP_MODULE = src/gateway/dynindex_http$(DLSUFFIX)
HTTP_SRC    = $(filter-out src/gateway/pool.c src/gateway/standby.c src/gateway/main.c \
                src/gateway/selftest.c,$(wildcard src/gateway/*.c))
all: $(HTTP_MODULE)
$(HTTP_MODULE): $(HTTP_SRC) $(wildcard src/gateway/*.h)
	$(CC) -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
	  $(CFLAGS_SL) -shared -Wl,-Bsymbolic -o $@ $(HTTP_SRC) \
	  -I$(includedir_server) -I$(shell $(PG_CONFIG) --includedir) -L$(shell $(PG_CONFIG) --libdir) \
	  $(shell pkg-config --cflags --libs libmicrohttpd) -lpq -lcrypto -lz
install: install-http
install-http: $(HTTP_MODULE)
	$(INSTALL_SHLIB) $(HTTP_MODULE) '$(DESTDIR)$(pkglibdir)/dynindex_http$(DLSUFFIX)'
EXTRA_CLEAN += $(HTTP_MODULE)
endif
endif

.PHONY: run test deps stop deb
deps:
	@bash test/bin/deps.sh
run:
	@bash test/bin/run.sh
stop:
	@bash test/bin/stop.sh
test:
	@bash test/bin/test-all.sh
deb:
	@bash test/bin/deb.sh
