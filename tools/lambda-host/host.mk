# tools/lambda-host/host.mk — included by the top Makefile (its OUT, CC, CFLAGS, Q and msg).
# The Lambda-like host (tools/lambda-host/) and the bundled sample functions (tools/functions/):
#   $(OUT)/tools/lambda-host, $(OUT)/tools/invoke, $(OUT)/tools/functions/{oom,leaky,arena}
# (the Python sample runs from its source folder). Needs libmicrohttpd-dev, installed by `make deps`.
EXTRA_DEPS += libmicrohttpd-dev
LH_DIR     := tools/lambda-host
FN_DIR     := tools/functions
# Frame pointers so the tracer's stacks through the sample functions are whole.
LH_CFLAGS  := $(CFLAGS) -D_GNU_SOURCE -pthread -fno-omit-frame-pointer
LH_SRCS    := $(addprefix $(LH_DIR)/,main.c server.c sandbox.c logfmt.c)
FN_NAMES   := oom leaky arena
LH_BINS    := $(OUT)/tools/lambda-host $(OUT)/tools/invoke $(patsubst %,$(OUT)/tools/functions/%,$(FN_NAMES)) \
	      $(OUT)/tests/host/test_logfmt

.PHONY: lambda-host test-host
lambda-host: $(LH_BINS)

$(OUT)/tools/functions:
	$(Q)mkdir -p $@

$(OUT)/tools/lambda-host: $(LH_SRCS) $(LH_DIR)/host.h | $(OUT)/tools/functions
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LH_CFLAGS) $(LH_SRCS) -lmicrohttpd -o $@

$(OUT)/tools/invoke: $(LH_DIR)/invoke.c $(FN_DIR)/runtime.c $(FN_DIR)/runtime.h | $(OUT)/tools/functions
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LH_CFLAGS) -iquote $(FN_DIR) $(LH_DIR)/invoke.c $(FN_DIR)/runtime.c -o $@

define LH_FUNCTION_RULE
$(OUT)/tools/functions/$(1): $(FN_DIR)/$(1)/$(1).c $(FN_DIR)/runtime.c $(FN_DIR)/runtime.h | $(OUT)/tools/functions
	$$(call msg,LINK,$$@)
	$$(Q)$$(CC) $$(LH_CFLAGS) -iquote $(FN_DIR) $(FN_DIR)/$(1)/$(1).c $(FN_DIR)/runtime.c -o $$@
endef
$(foreach f,$(FN_NAMES),$(eval $(call LH_FUNCTION_RULE,$(f))))

# Unit test of the pure formatting functions (REPORT line, rounding, ids, event scraps).
$(OUT)/tests/host/test_logfmt: tests/host/test_logfmt.c $(LH_DIR)/logfmt.c $(LH_DIR)/host.h $(FN_DIR)/runtime.c $(FN_DIR)/runtime.h
	$(Q)mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LH_CFLAGS) -iquote tests/unit -iquote $(LH_DIR) -iquote $(FN_DIR) $< $(LH_DIR)/logfmt.c $(FN_DIR)/runtime.c -o $@

# Optional: the real Node.js runtime interface client for tools/functions/node (see its README;
# needs cmake autoconf automake libtool g++, about 2 minutes).
.PHONY: lambda-node-ric
lambda-node-ric:
	$(Q)cd $(FN_DIR)/node && npm_config_nodedir=/usr npm install --no-audit --no-fund

# The host's own tests (python3 stdlib); tests/run.py can run the same script.
test-host: lambda-host
	$(Q)python3 tests/host/test_host.py --build $(OUT)
