/* packet-spanfold.h - the Trace Context postdissector's registration hooks. */
#ifndef PACKET_SPANFOLD_H
#define PACKET_SPANFOLD_H

void proto_register_tracectx(void);
void proto_reg_handoff_tracectx(void);

#endif
