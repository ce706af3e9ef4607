/* ctl_json.h — protobuf-c messages as JSON, for tmpictl --json.
 *
 * Walks the message descriptor, so every field of a reply appears under its proto name and a
 * field added to control.proto shows up in the JSON without touching tmpictl.
 */
#ifndef TMPI_LAUNCHER_CTL_JSON_H
#define TMPI_LAUNCHER_CTL_JSON_H

#include <json-c/json.h>
#include <protobuf-c/protobuf-c.h>

/* A new JSON object for msg (proto3: every field, zero values included), or NULL on ENOMEM. */
json_object *ctl_json_from_message(const ProtobufCMessage *msg);

#endif
