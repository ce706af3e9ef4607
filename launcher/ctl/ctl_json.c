/* ctl_json.c — generic protobuf-c message -> json-c conversion.
 *
 * Scalars map to JSON numbers, strings and booleans; enums to their proto value name; bytes
 * to lowercase hex (hashes are what we carry); repeated fields to arrays; messages recurse.
 *
 * fixed64 fields (the random 64-bit job uid) become decimal strings: most JSON readers (jq,
 * JavaScript) hold numbers as doubles and would round an id above 2^53.  Other 64-bit fields
 * are counters and sequential ids, which stay far below 2^53, and remain numbers.
 */
#include <inttypes.h>
#include <stdio.h>
#include "ctl_json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static json_object *hex(const ProtobufCBinaryData *b)
{
    static const char digits[] = "0123456789abcdef";
    char *s = malloc(2 * b->len + 1);
    if (!s) return NULL;
    for (size_t i = 0; i < b->len; i++) {
        s[2 * i] = digits[b->data[i] >> 4];
        s[2 * i + 1] = digits[b->data[i] & 15];
    }
    s[2 * b->len] = '\0';
    json_object *o = json_object_new_string(s);
    free(s);
    return o;
}

/* One value of field f stored at p (a pointer to the C member or array element). */
static json_object *value(const ProtobufCFieldDescriptor *f, const void *p)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        return json_object_new_int64(*(const int32_t *)p);
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        return json_object_new_int64(*(const uint32_t *)p);
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        return json_object_new_int64(*(const int64_t *)p);
    case PROTOBUF_C_TYPE_UINT64:
        return json_object_new_uint64(*(const uint64_t *)p);
    case PROTOBUF_C_TYPE_FIXED64: {
        char s[24];
        snprintf(s, sizeof s, "%" PRIu64, *(const uint64_t *)p);
        return json_object_new_string(s);
    }
    case PROTOBUF_C_TYPE_FLOAT:
        return json_object_new_double(*(const float *)p);
    case PROTOBUF_C_TYPE_DOUBLE:
        return json_object_new_double(*(const double *)p);
    case PROTOBUF_C_TYPE_BOOL:
        return json_object_new_boolean(*(const protobuf_c_boolean *)p);
    case PROTOBUF_C_TYPE_ENUM: {
        int v = *(const int *)p;
        const ProtobufCEnumValue *ev =
            protobuf_c_enum_descriptor_get_value((const ProtobufCEnumDescriptor *)f->descriptor, v);
        return ev ? json_object_new_string(ev->name) : json_object_new_int(v);
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        return json_object_new_string(s ? s : "");
    }
    case PROTOBUF_C_TYPE_BYTES:
        return hex((const ProtobufCBinaryData *)p);
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *m = *(ProtobufCMessage *const *)p;
        /* An absent sub-message reads as null, which scripts can test for. */
        return m ? ctl_json_from_message(m) : json_object_new_null();
    }
    }
    return json_object_new_null();
}

/* Size of one element of a repeated field's C array. */
static size_t elem_size(const ProtobufCFieldDescriptor *f)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return 8;
    case PROTOBUF_C_TYPE_DOUBLE:
        return sizeof(double);
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_ENUM:
        return sizeof(int);
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    default:
        return 4;
    }
}

json_object *ctl_json_from_message(const ProtobufCMessage *msg)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    json_object *obj = json_object_new_object();
    if (!obj) return NULL;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const char *base = (const char *)msg;
        json_object *v;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            const char *arr = *(char *const *)(base + f->offset);
            v = json_object_new_array_ext((int)n);
            for (size_t k = 0; v && k < n; k++) {
                json_object *e = value(f, arr + k * elem_size(f));
                if (!e || json_object_array_add(v, e) < 0) {
                    json_object_put(e);
                    json_object_put(v);
                    v = NULL;
                }
            }
        } else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF &&
                   *(const uint32_t *)(base + f->quantifier_offset) != f->id) {
            continue; /* not the member of its oneof that is set */
        } else {
            v = value(f, base + f->offset);
        }
        if (!v || json_object_object_add(obj, f->name, v) < 0) {
            json_object_put(v);
            json_object_put(obj);
            return NULL;
        }
    }
    return obj;
}
