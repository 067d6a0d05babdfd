# spanfold-export/build.mk - exports to OTLP/JSON, Zipkin, Chrome/Perfetto, speedscope, pprof.
# The pprof message types are generated from profile.proto by protoc-c (protobuf-c).
TOOLS += spanfold-export
LDLIBS_spanfold-export = $(call pc,libprotobuf-c zlib sqlite3)
CPPFLAGS_spanfold-export = -I$(B)/spanfold-export
$(B)/spanfold-export/profile.pb-c.c $(B)/spanfold-export/profile.pb-c.h: spanfold-export/profile.proto
	@mkdir -p $(B)/spanfold-export
	cd spanfold-export && protoc-c --c_out=$(CURDIR)/$(B)/spanfold-export profile.proto
$(B)/spanfold-export/profile.pb-c.o: $(B)/spanfold-export/profile.pb-c.c
	$(CC) $(CPPFLAGS) -I$(B)/spanfold-export $(CFLAGS) -c $< -o $@
$(B)/spanfold-export/pprof.o: $(B)/spanfold-export/profile.pb-c.h
EXTRA_OBJ_spanfold-export := $(B)/spanfold-export/profile.pb-c.o
$(BIN)/spanfold-export: $(EXTRA_OBJ_spanfold-export)
