# dissector/build.mk - the Wireshark 4.0 "Trace Context" plugin (optional).
# Built only against Wireshark 4.0's development files (the plugin ABI is per
# minor version); otherwise `make` says why it was skipped.  The lib/ files it
# shares with pcap2spans are compiled again as position-independent code.
WS_VERSION := $(shell $(PKG_CONFIG) --modversion wireshark 2>/dev/null)
WS_PLUGIN_DIR ?= $(HOME)/.local/lib/wireshark/plugins/4.0/epan
ifneq ($(filter 4.0.%,$(WS_VERSION)),)
DISSECTOR_SO  := $(B)/dissector/spanfold.so
DISSECTOR_LIB := sf_tracectx sf_attrs sf_text sf_json sf_jsonrpc sf_sse sf_buf $(basename $(notdir $(wildcard lib/sf_tc_*.c))) sf_hex sf_base64 sf_err
DISSECTOR_OBJ := $(patsubst %.c,$(B)/pic/%.o,$(wildcard dissector/*.c)) \
                 $(patsubst %,$(B)/pic/lib/%.o,$(DISSECTOR_LIB))
OPTIONAL += $(DISSECTOR_SO)
OPTIONAL_TESTS += dissector
$(B)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(call pcflags,wireshark) -std=gnu11 -Wall -Wextra -fPIC \
	    -fvisibility=hidden $(CFLAGS) -c $< -o $@
$(DISSECTOR_SO): $(DISSECTOR_OBJ)
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS) $^ $(call pc,wireshark) -o $@
install-plugin: $(DISSECTOR_SO)
	install -D -m 0644 $< $(WS_PLUGIN_DIR)/spanfold.so
	@echo "installed $(WS_PLUGIN_DIR)/spanfold.so (tshark -G plugins | grep spanfold)"
else
OPTIONAL += dissector-skipped
dissector-skipped:
	@echo "dissector: skipped: needs Wireshark 4.0 development files (libwireshark-dev), found '$(WS_VERSION)'"
install-plugin: dissector-skipped
endif
.PHONY: install-plugin dissector-skipped
