/* plugin.c - Wireshark 4.0 plugin entry points for the spanfold Trace Context
 * dissector (packet-spanfold.c).  Wireshark loads a plugin that exports exactly
 * plugin_version, plugin_want_major/minor and plugin_register. */
#define WS_BUILD_DLL
#include <epan/packet.h>
#include <epan/proto.h>
#include <wireshark.h>

#include "packet-spanfold.h"

#ifndef SF_PLUGIN_VERSION
#define SF_PLUGIN_VERSION "0.1.0"
#endif

WS_DLL_PUBLIC_DEF const gchar plugin_version[] = SF_PLUGIN_VERSION;
WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;

WS_DLL_PUBLIC void plugin_register(void);

void plugin_register(void)
{
    static proto_plugin plug;

    plug.register_protoinfo = proto_register_tracectx;
    plug.register_handoff = proto_reg_handoff_tracectx;
    proto_register_plugin(&plug);
}
