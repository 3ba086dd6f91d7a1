#!/usr/bin/env python3
"""Generate broker/ns0_gen.{h,c}: namespace 0 as compact constant tables.

Usage: gen_ns0.py SCHEMA_DIR OUT_DIR

Reads Opc.Ua.NodeSet2.xml (the nodes), NodeIds.csv (the DefaultBinary
encoding id of each ExtensionObject body) and Opc.Ua.Types.bsd (the field
order of those bodies) and writes, for the broker to load into the node store:

  bk_ns0_nodes[]    one entry per node, sorted by numeric id
  bk_ns0_refs[]     every reference once, forward, at its source node
  bk_ns0_strings[]  NUL-terminated names, deduplicated; offset 0 is ""
  bk_ns0_values[]   each Value as an OPC UA Binary Variant (Part 6 §5.2.2.16)
  bk_ns0_u32[]      ArrayDimensions as { n, dim_1 .. dim_n }; [0] is a dummy

Descriptions are kept (text only: namespace 0 gives none a Locale);
Documentation is left out on purpose (the Description fields inside
Argument, EnumValueType and EUInformation values are part of the value
and stay).  Attributes the node entry has no room for are counted
in the summary (see broker/gen/README.md).

Python 3 standard library only; the output depends only on the input files.
"""

import base64
import collections
import csv
import datetime
import os
import re
import struct
import sys
import textwrap
import xml.etree.ElementTree as ET

SCRIPT = 'gen_ns0.py'
SPEC_VERSION = '1.05.03'
SPEC_DATE = '2023-12-15'
COPYRIGHT = ('Copyright (c) 2005-2024 The OPC Foundation, Inc. '
             'All rights reserved.')

NS_SET = '{http://opcfoundation.org/UA/2011/03/UANodeSet.xsd}'
NS_TYPES = '{http://opcfoundation.org/UA/2008/02/Types.xsd}'
NS_BSD = '{http://opcfoundation.org/BinarySchema/}'

# NodeClass enumeration values, Part 3 §8.29.
NODE_CLASSES = collections.OrderedDict([
    ('UAObject', 1), ('UAVariable', 2), ('UAMethod', 4),
    ('UAObjectType', 8), ('UAVariableType', 16), ('UAReferenceType', 32),
    ('UADataType', 64), ('UAView', 128),
])

F_ABSTRACT = 0x01
F_SYMMETRIC = 0x02
F_CONTAINS_NO_LOOPS = 0x04
F_HISTORIZING = 0x08
F_EXECUTABLE = 0x10

# Boolean node attributes: (attribute, flag, node elements that have it,
# UANodeSet.xsd default).  UAMethod Executable defaults to true.
FLAG_ATTRS = [
    ('IsAbstract', F_ABSTRACT,
     ('UAObjectType', 'UAVariableType', 'UAReferenceType', 'UADataType'),
     False),
    ('Symmetric', F_SYMMETRIC, ('UAReferenceType',), False),
    ('ContainsNoLoops', F_CONTAINS_NO_LOOPS, ('UAView',), False),
    ('Historizing', F_HISTORIZING, ('UAVariable',), False),
    ('Executable', F_EXECUTABLE, ('UAMethod',), True),
]

# UANodeSet.xsd attributes and elements the node entry does not carry.
# Documentation is dropped by design.
DROPPED_ATTRS = ('UserWriteMask', 'UserAccessLevel', 'UserExecutable',
                 'AccessRestrictions', 'MethodDeclarationId',
                 'ReleaseStatus', 'SymbolicName')
DROPPED_ELEMS = ('Documentation', 'Category',
                 'RolePermissions', 'Definition', 'Extensions',
                 'ArgumentDescription', 'Translation')
KNOWN_ATTRS = {'NodeId', 'BrowseName', 'ParentNodeId', 'WriteMask',
               'EventNotifier', 'DataType', 'ValueRank', 'ArrayDimensions',
               'AccessLevel', 'MinimumSamplingInterval'} | \
    set(a for a, _, _, _ in FLAG_ATTRS) | set(DROPPED_ATTRS)
KNOWN_ELEMS = {'DisplayName', 'Description', 'References', 'Value',
               'InverseName'} | \
    set(DROPPED_ELEMS)

# Built-in type ids, Part 6 §5.1.2 Table 1.
BT = {
    'Boolean': 1, 'SByte': 2, 'Byte': 3, 'Int16': 4, 'UInt16': 5,
    'Int32': 6, 'UInt32': 7, 'Int64': 8, 'UInt64': 9, 'Float': 10,
    'Double': 11, 'String': 12, 'DateTime': 13, 'ByteString': 15,
    'LocalizedText': 21, 'ExtensionObject': 22,
}
# Fixed-size numbers: struct format and Python conversion.
NUMBERS = {
    'SByte': ('<b', int), 'Byte': ('<B', int), 'Int16': ('<h', int),
    'UInt16': ('<H', int), 'Int32': ('<i', int), 'UInt32': ('<I', int),
    'Int64': ('<q', int), 'UInt64': ('<Q', int), 'Float': ('<f', float),
    'Double': ('<d', float),
}

# Part 6 §5.2.2.9 ExtensionObject encoding byte: body is a ByteString.
EO_BINARY_BODY = 0x01
# Part 6 §5.2.2.5: DateTime ticks are 100 ns since 1601-01-01 00:00 UTC.
EPOCH_1601 = datetime.datetime(1601, 1, 1, tzinfo=datetime.timezone.utc)


def fail(msg):
    sys.exit('%s: error: %s' % (SCRIPT, msg))


# ----------------------------------------------------------------- inputs

def check_schema_version(root):
    models = root.findall(NS_SET + 'Models/' + NS_SET + 'Model')
    ua = [m for m in models
          if m.get('ModelUri') == 'http://opcfoundation.org/UA/']
    if (len(ua) != 1 or ua[0].get('Version') != SPEC_VERSION
            or not (ua[0].get('PublicationDate') or '').startswith(
                SPEC_DATE + 'T')):
        fail('Opc.Ua.NodeSet2.xml is not OPC UA %s (%s): update '
             'SPEC_VERSION/SPEC_DATE after checking the changes'
             % (SPEC_VERSION, SPEC_DATE))


def license_lines(schema):
    """The OPC Foundation MIT License 1.00 notice, copyright line on."""
    path = os.path.join(schema, 'LICENSE-OPCFoundation-MIT-1.00.txt')
    with open(path, 'r', encoding='ascii') as f:
        lines = f.read().split('\n')
    starts = [i for i, l in enumerate(lines) if l.strip() == COPYRIGHT]
    if len(starts) != 1:
        fail('LICENSE-OPCFoundation-MIT-1.00.txt: copyright line not found')
    text = [l.rstrip() for l in lines[starts[0]:]]
    while text and text[-1] == '':
        text.pop()
    if any('*/' in l for l in text):
        fail('"*/" in the license text')
    return text


def read_nodeids(schema):
    """NodeIds.csv as {symbolic name: id} and {id: symbolic name}."""
    by_name, by_id = {}, {}
    path = os.path.join(schema, 'NodeIds.csv')
    with open(path, 'r', encoding='utf-8', newline='') as f:
        for row in csv.reader(f.read().splitlines()):
            if not row:
                continue
            if len(row) != 3:
                fail('NodeIds.csv: bad record %r' % (row,))
            by_name[row[0]] = int(row[1])
            by_id[int(row[1])] = row[0]
    return by_name, by_id


def read_bsd(schema):
    """StructuredTypes of Opc.Ua.Types.bsd: {name: [(field, type, is_array)]}.

    A field named as another field's LengthField is the array count; it is
    folded into the array (the Int32 count precedes the elements)."""
    root = ET.parse(os.path.join(schema, 'Opc.Ua.Types.bsd')).getroot()
    out = {}
    for st in root.findall(NS_BSD + 'StructuredType'):
        fields = st.findall(NS_BSD + 'Field')
        counts = set(f.get('LengthField') for f in fields
                     if f.get('LengthField'))
        out[st.get('Name')] = [
            (f.get('Name'), f.get('TypeName'),
             f.get('LengthField') is not None)
            for f in fields if f.get('Name') not in counts]
    return out


# ----------------------------------------------------------------- NodeIds

def parse_nodeid(text, aliases, what):
    """A NodeSet NodeId (alias, i=N or ns=0;i=N) as an ns0 numeric id, or
    None when it is not one (another namespace or identifier type)."""
    text = text.strip()
    text = aliases.get(text, text)
    m = re.fullmatch(r'(?:ns=(\d+);)?i=(\d+)', text)
    if m is None or (m.group(1) is not None and int(m.group(1)) != 0):
        return None
    n = int(m.group(2))
    if n > 0xFFFFFFFF:
        fail('%s: NodeId %s out of range' % (what, text))
    return n


def parse_xml_nodeid(text, what):
    """An XML-encoded NodeId <Identifier> as (ns, numeric id)."""
    m = re.fullmatch(r'(?:ns=(\d+);)?i=(\d+)', (text or '').strip())
    if m is None:
        fail('%s: NodeId %r is not numeric; add its encoding' % (what, text))
    return int(m.group(1) or 0), int(m.group(2))


def browse_name(text, what):
    """BrowseName 'name' or 'ns:name'; namespace 0 is the only one here."""
    m = re.match(r'(\d+):', text)
    if m:
        if int(m.group(1)) != 0:
            fail('%s: BrowseName %r is not in namespace 0' % (what, text))
        return text[m.end():], True
    return text, False


# ----------------------------------------------------------------- encoding

def enc_string(s):
    """Part 6 §5.2.2.4: Int32 length + UTF-8; None is the null string."""
    if s is None:
        return struct.pack('<i', -1)
    b = s.encode('utf-8')
    return struct.pack('<i', len(b)) + b


def enc_nodeid(ns, n):
    """Part 6 §5.2.2.9: the smallest numeric form."""
    if ns == 0 and n <= 0xFF:
        return struct.pack('<BB', 0x00, n)
    if ns <= 0xFF and n <= 0xFFFF:
        return struct.pack('<BBH', 0x01, ns, n)
    return struct.pack('<BHI', 0x02, ns, n)


def child(el, name):
    return el.find(NS_TYPES + name)


def enc_localizedtext(el):
    """Part 6 §5.2.2.14: mask 0x01 locale, 0x02 text; an absent element
    (el None) or absent Locale/Text leaves its bit clear."""
    if el is None:
        return b'\x00'
    mask, body = 0, b''
    loc, txt = child(el, 'Locale'), child(el, 'Text')
    if loc is not None:
        mask |= 0x01
        body += enc_string(loc.text or '')
    if txt is not None:
        mask |= 0x02
        body += enc_string(txt.text or '')
    return bytes([mask]) + body


def parse_datetime(text, what):
    m = re.fullmatch(r'(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?'
                     r'(Z|[+-]\d\d:\d\d)?', text.strip())
    if m is None:
        fail('%s: bad xs:dateTime %r' % (what, text))
    tz = datetime.timezone.utc
    if m.group(8) and m.group(8) != 'Z':
        sign = -1 if m.group(8)[0] == '-' else 1
        tz = datetime.timezone(sign * datetime.timedelta(
            hours=int(m.group(8)[1:3]), minutes=int(m.group(8)[4:6])))
    dt = datetime.datetime(*(int(m.group(i)) for i in range(1, 7)), tzinfo=tz)
    d = dt - EPOCH_1601
    ticks = (d.days * 86400 + d.seconds) * 10000000
    if m.group(7):
        ticks += int((m.group(7)[1:] + '0000000')[:7])
    return ticks


def scalar_text(el):
    return (el.text or '').strip()


class ValueEncoder:
    """Encodes <Value> children as Variants; counts what it sees."""

    def __init__(self, nodeids_by_name, nodeids_by_id, bsd):
        self.by_name = nodeids_by_name
        self.by_id = nodeids_by_id
        self.bsd = bsd
        self.eo_types = collections.Counter()   # body type name -> count

    def builtin(self, name, el, what):
        """The encoding of one element of built-in type name (no Variant
        header)."""
        if name in NUMBERS:
            fmt, conv = NUMBERS[name]
            return struct.pack(fmt, conv(scalar_text(el)))
        if name == 'Boolean':
            t = scalar_text(el)
            if t not in ('true', 'false', '1', '0'):
                fail('%s: bad Boolean %r' % (what, t))
            return b'\x01' if t in ('true', '1') else b'\x00'
        if name == 'String':
            return enc_string(el.text or '')
        if name == 'DateTime':
            return struct.pack('<q', parse_datetime(el.text or '', what))
        if name == 'ByteString':
            raw = re.sub(r'\s+', '', el.text or '')
            try:
                data = base64.b64decode(raw, validate=True)
            except ValueError:
                fail('%s: bad base64 in ByteString' % what)
            return struct.pack('<i', len(data)) + data
        if name == 'LocalizedText':
            return enc_localizedtext(el)
        if name == 'ExtensionObject':
            return self.extobj(el, what)
        fail('%s: no encoding for <%s> values; add it' % (what, name))

    def extobj(self, el, what):
        """Part 6 §5.2.2.15: the DefaultBinary encoding id, 0x01, the body
        as Int32 length + bytes.  The XML names the DefaultXml id."""
        tid = child(child(el, 'TypeId'), 'Identifier') \
            if child(el, 'TypeId') is not None else None
        if tid is None:
            fail('%s: ExtensionObject without TypeId' % what)
        ns, xml_id = parse_xml_nodeid(tid.text, what)
        sym = self.by_id.get(xml_id) if ns == 0 else None
        if sym is None or not sym.endswith('_Encoding_DefaultXml'):
            fail('%s: ExtensionObject TypeId %r is not a DefaultXml '
                 'encoding id' % (what, tid.text))
        tname = sym[:-len('_Encoding_DefaultXml')]
        bin_id = self.by_name.get(tname + '_Encoding_DefaultBinary')
        if bin_id is None or tname not in self.bsd:
            fail('%s: no DefaultBinary encoding or BSD entry for %s'
                 % (what, tname))
        body = child(el, 'Body')
        parts = list(body) if body is not None else []
        if len(parts) != 1 or parts[0].tag != NS_TYPES + tname:
            fail('%s: ExtensionObject body is not one <%s>' % (what, tname))
        data = self.structure(tname, parts[0], what)
        self.eo_types[tname] += 1
        return (enc_nodeid(0, bin_id) + bytes([EO_BINARY_BODY])
                + struct.pack('<i', len(data)) + data)

    def structure(self, tname, el, what):
        """A structure body in BSD field order.  An absent field is the
        null/zero value of its type (null string, null array, mask 0)."""
        fields = self.bsd[tname]
        names = set(f for f, _, _ in fields)
        for c in el:
            if not c.tag.startswith(NS_TYPES) or \
                    c.tag[len(NS_TYPES):] not in names:
                fail('%s: unknown field <%s> in %s' % (what, c.tag, tname))
        out = b''
        for fname, ftype, is_array in fields:
            f = child(el, fname)
            w = '%s %s.%s' % (what, tname, fname)
            if is_array:
                if f is None:
                    out += struct.pack('<i', -1)
                    continue
                elems = list(f)
                out += struct.pack('<i', len(elems))
                for e in elems:
                    out += self.field(ftype, e, w, e.tag)
            else:
                out += self.field(ftype, f, w, None)
        return out

    def field(self, ftype, el, what, tag):
        name = ftype.partition(':')[2]
        if tag is not None and tag != NS_TYPES + name:
            fail('%s: array element <%s>, expected <%s>' % (what, tag, name))
        if name == 'NodeId':
            if el is None:
                return enc_nodeid(0, 0)
            return enc_nodeid(*parse_xml_nodeid(
                scalar_text(child(el, 'Identifier'))
                if child(el, 'Identifier') is not None else '', what))
        if name == 'LocalizedText':
            return enc_localizedtext(el)
        if name == 'String':
            return enc_string(None if el is None else (el.text or ''))
        if name == 'Boolean':
            return b'\x00' if el is None else self.builtin(name, el, what)
        if name in NUMBERS:
            if el is None:
                return struct.pack(NUMBERS[name][0], 0)
            return self.builtin(name, el, what)
        fail('%s: no encoding for field type %s; add it' % (what, ftype))

    def variant(self, el, what):
        """One <Value> child as a Variant; returns (bytes, type label)."""
        if not el.tag.startswith(NS_TYPES):
            fail('%s: value element %s is not in the Types namespace'
                 % (what, el.tag))
        name = el.tag[len(NS_TYPES):]
        if name.startswith('ListOf'):
            ename = name[len('ListOf'):]
            if ename not in BT:
                fail('%s: no encoding for <%s> values; add it' % (what, name))
            elems = list(el)
            for e in elems:
                if e.tag != NS_TYPES + ename:
                    fail('%s: <%s> inside <%s>' % (what, e.tag, name))
            out = bytes([BT[ename] | 0x80]) + struct.pack('<i', len(elems))
            for e in elems:
                out += self.builtin(ename, e, what)
            return out, name
        if name not in BT:
            fail('%s: no encoding for <%s> values; add it' % (what, name))
        return bytes([BT[name]]) + self.builtin(name, el, what), name


# ----------------------------------------------------------------- nodes

class Node:
    __slots__ = ('id', 'tag', 'node_class', 'flags', 'access_level',
                 'event_notifier', 'browse_name', 'display_name',
                 'display_locale', 'inverse_name', 'description',
                 'data_type', 'value_rank', 'array_dims', 'value',
                 'value_type', 'write_mask', 'min_sampling', 'refs', 'parent')


def read_nodes(root, aliases, enc, stats):
    nodes = {}
    raw_refs = []           # (node id, type text, target text, is_forward)
    for el in root:
        tag = el.tag[len(NS_SET):] if el.tag.startswith(NS_SET) else el.tag
        if tag in ('Models', 'Aliases', 'NamespaceUris', 'ServerUris',
                   'Extensions'):
            continue
        if tag not in NODE_CLASSES:
            fail('unknown top-level element <%s>' % tag)
        n = Node()
        n.tag = tag
        n.node_class = NODE_CLASSES[tag]
        n.id = parse_nodeid(el.get('NodeId', ''), {}, tag)
        if n.id is None:
            fail('%s NodeId %r is not ns=0 numeric' % (tag, el.get('NodeId')))
        what = 'i=%d' % n.id
        if n.id in nodes:
            fail('%s: duplicate NodeId' % what)
        nodes[n.id] = n
        for a in el.attrib:
            if a not in KNOWN_ATTRS:
                fail('%s: unknown attribute %s' % (what, a))
            if a in DROPPED_ATTRS:
                stats['dropped attribute ' + a] += 1
        for c in el:
            ctag = c.tag[len(NS_SET):] if c.tag.startswith(NS_SET) else c.tag
            if ctag not in KNOWN_ELEMS:
                fail('%s: unknown element <%s>' % (what, ctag))
            if ctag in DROPPED_ELEMS:
                stats['dropped element ' + ctag] += 1

        n.parent = parse_nodeid(el.get('ParentNodeId', ''), aliases, what) \
            if el.get('ParentNodeId') else None
        n.browse_name, prefixed = browse_name(el.get('BrowseName', ''), what)
        if n.browse_name == '':
            fail('%s: empty BrowseName' % what)
        if prefixed:
            stats['BrowseName with "0:" prefix'] += 1
        dns = el.findall(NS_SET + 'DisplayName')
        if len(dns) != 1:
            fail('%s: %d DisplayNames (one expected)' % (what, len(dns)))
        n.display_name = dns[0].text or ''
        n.display_locale = dns[0].get('Locale') or ''
        inv = el.findall(NS_SET + 'InverseName')
        if len(inv) > 1:
            fail('%s: %d InverseNames (at most one expected)'
                 % (what, len(inv)))
        n.inverse_name = (inv[0].text or '') if inv else ''
        if inv and inv[0].get('Locale'):
            stats['dropped InverseName Locale'] += 1
        desc = el.findall(NS_SET + 'Description')
        if len(desc) > 1:
            fail('%s: %d Descriptions (at most one expected)'
                 % (what, len(desc)))
        n.description = (desc[0].text or '') if desc else ''
        if desc and desc[0].get('Locale'):
            fail('%s: a Description Locale (the table has no room for it)'
                 % what)

        n.flags = 0
        for attr, flag, tags, default in FLAG_ATTRS:
            v = el.get(attr)
            if v is not None and tag not in tags:
                fail('%s: %s on a %s' % (what, attr, tag))
            if tag not in tags:
                continue
            if v is None:
                on = default
            elif v in ('true', '1'):
                on = True
            elif v in ('false', '0'):
                on = False
            else:
                fail('%s: bad %s %r' % (what, attr, v))
            if on:
                n.flags |= flag

        n.write_mask = int(el.get('WriteMask', '0'))
        n.event_notifier = int(el.get('EventNotifier', '0'))
        n.access_level = 0
        n.min_sampling = 0.0
        n.data_type = 0
        n.value_rank = 0
        n.array_dims = None
        if tag == 'UAVariable':
            n.access_level = int(el.get('AccessLevel', '1'))
            if n.access_level > 0xFF:
                fail('%s: AccessLevel %d does not fit a Byte'
                     % (what, n.access_level))
            n.min_sampling = float(el.get('MinimumSamplingInterval', '0'))
        if tag in ('UAVariable', 'UAVariableType'):
            n.data_type = parse_nodeid(el.get('DataType', 'i=24'), aliases,
                                       what)
            if n.data_type is None:
                fail('%s: DataType %r is not ns=0 numeric'
                     % (what, el.get('DataType')))
            n.value_rank = int(el.get('ValueRank', '-1'))
            ad = el.get('ArrayDimensions', '').strip()
            if ad:
                n.array_dims = tuple(int(x) for x in ad.split(','))
        if n.event_notifier > 0xFF:
            fail('%s: EventNotifier does not fit a Byte' % what)

        n.value = None
        n.value_type = None
        val = el.findall(NS_SET + 'Value')
        if val:
            if len(val) != 1 or len(list(val[0])) != 1:
                fail('%s: <Value> must hold exactly one element' % what)
            n.value, n.value_type = enc.variant(list(val[0])[0], what)

        for r in el.findall(NS_SET + 'References/' + NS_SET + 'Reference'):
            fwd = r.get('IsForward', 'true')
            if fwd not in ('true', 'false'):
                fail('%s: bad IsForward %r' % (what, fwd))
            raw_refs.append((n.id, r.get('ReferenceType', ''),
                             r.text or '', fwd == 'true'))
    return nodes, raw_refs


def normalise_refs(nodes, raw_refs, aliases, stats, problems):
    """Forward (source, type, target) triples, each once."""
    seen = collections.Counter()
    sides = collections.defaultdict(set)
    for nid, rtype, target, fwd in raw_refs:
        t = parse_nodeid(rtype, aliases, 'i=%d' % nid)
        other = parse_nodeid(target, aliases, 'i=%d' % nid)
        if t is None or t not in nodes:
            problems.append('i=%d: reference type %s is not in the NodeSet; '
                            'skipped' % (nid, rtype))
            continue
        if nodes[t].node_class != NODE_CLASSES['UAReferenceType']:
            problems.append('i=%d: reference type %s is not a ReferenceType; '
                            'skipped' % (nid, rtype))
            continue
        if other is None or other not in nodes:
            problems.append('i=%d: reference %s %s to %s: target is not in '
                            'the NodeSet; skipped'
                            % (nid, rtype, 'forward' if fwd else 'inverse',
                               target.strip()))
            continue
        key = (nid, t, other) if fwd else (other, t, nid)
        seen[key] += 1
        sides[key].add('source' if fwd else 'target')
    stats['references listed'] = sum(seen.values())
    stats['references listed twice'] = sum(1 for c in seen.values() if c == 2)
    stats['references listed more than twice'] = \
        sum(1 for c in seen.values() if c > 2)
    stats['references listed twice at the same end'] = \
        sum(1 for k, c in seen.items() if c > len(sides[k]))
    stats['references listed only at the source'] = \
        sum(1 for s in sides.values() if s == {'source'})
    stats['references listed only at the target'] = \
        sum(1 for s in sides.values() if s == {'target'})
    for n in nodes.values():
        n.refs = []
    for src, t, dst in seen:
        nodes[src].refs.append((t, dst))
    for n in nodes.values():
        n.refs.sort()
    return len(seen)


def check_targets(nodes, problems):
    """DataTypes must exist; ParentNodeId is only a hint (no reference of
    its own), but a parent with no reference to its child is reported."""
    for n in sorted(nodes.values(), key=lambda x: x.id):
        if n.parent is not None and not (
                any(t == n.id for _, t in nodes[n.parent].refs)
                if n.parent in nodes else False):
            problems.append('i=%d: ParentNodeId i=%s has no reference to it'
                            % (n.id, n.parent))
        if n.data_type and (n.data_type not in nodes or
                            nodes[n.data_type].node_class != 64):
            problems.append('i=%d: DataType i=%d is not a DataType node'
                            % (n.id, n.data_type))


# ----------------------------------------------------------------- tables

class Heap:
    """Deduplicated byte heap; offset 0 holds the empty entry."""

    def __init__(self, first):
        self.data = bytearray(first)
        self.index = {}
        self.items = []         # (offset, bytes, label) in order of addition

    def add(self, b, label):
        if b in self.index:
            return self.index[b], False
        off = len(self.data)
        self.index[b] = off
        self.data += b
        self.items.append((off, b, label))
        return off, True


def c_escape(b):
    """bytes as the inside of a C string literal: printable ASCII as is,
    the rest as 3-digit octal; '?' escaped (trigraphs are on in C11)."""
    out = []
    for x in b:
        ch = chr(x)
        if ch in '"\\?':
            out.append('\\' + ch)
        elif 0x20 <= x < 0x7F:
            out.append(ch)
        else:
            out.append('\\%03o' % x)
    return ''.join(out)


def literal_lines(b, indent, width=78):
    """A byte string as C literal lines no wider than width (escapes whole)."""
    lines, cur = [], ''
    room = width - len(indent) - 2
    for x in b:
        e = c_escape(bytes([x]))
        if len(cur) + len(e) > room:
            lines.append(indent + '"' + cur + '"')
            cur = ''
        cur += e
    lines.append(indent + '"' + cur + '"')
    return lines


def comment_text(s):
    s = s.encode('ascii', 'backslashreplace').decode('ascii')
    return s.replace('*/', '*\\/')


def build_tables(nodes):
    order = sorted(nodes.values(), key=lambda x: x.id)
    strings = Heap(b'\x00')
    values = Heap(b'')
    dims = [0]
    dims_index = {}
    refs = []
    rows = []
    shared_values = 0

    def sref(s):
        if s == '':
            return 0
        b = s.encode('utf-8')
        if b'\x00' in b:
            fail('NUL in string %r' % s)
        return strings.add(b + b'\x00', s)[0]

    for n in order:
        bn = sref(n.browse_name)
        dn = sref(n.display_name)
        dl = sref(n.display_locale)
        inv = sref(n.inverse_name)
        desc = sref(n.description)
        ad = 0
        if n.array_dims is not None:
            if n.array_dims not in dims_index:
                dims_index[n.array_dims] = len(dims)
                dims.append(len(n.array_dims))
                dims.extend(n.array_dims)
            ad = dims_index[n.array_dims]
        voff = vlen = 0
        if n.value is not None:
            voff, new = values.add(n.value, 'i=%d %s: %s' % (
                n.id, n.browse_name, n.value_type))
            if not new:
                shared_values += 1
            vlen = len(n.value)
        first = len(refs)
        refs.extend(n.refs)
        rows.append((n, (n.id, n.node_class, n.flags, n.access_level,
                         n.event_notifier, bn, dn, dl, inv, desc,
                         n.data_type,
                         n.value_rank, ad, voff, vlen, n.write_mask, first,
                         len(n.refs), n.min_sampling)))
    # The literal's own NUL terminates the last string.
    return order, rows, refs, strings, values, dims, shared_values


# ----------------------------------------------------------------- output

def banner(schema):
    first = ('Generated by broker/gen/%s from Opc.Ua.NodeSet2.xml of OPC UA '
             '%s (%s). Do not edit; run `make regen`.'
             % (SCRIPT, SPEC_VERSION, SPEC_DATE))
    out = ['/*']
    out += [' * ' + l for l in textwrap.wrap(first, 76)]
    out.append(' *')
    out += [(' * ' + l).rstrip() for l in license_lines(schema)]
    out.append(' */')
    return '\n'.join(out) + '\n\n'


def gen_header(schema, nnodes, nrefs, strings_size, values_size):
    return banner(schema) + '''\
/*
 * broker/ns0_gen.h: namespace 0 of OPC UA %(ver)s as constant tables, for
 * the broker to load into the node store (shm/nodestore.h).
 *
 * Every node is ns=0 with a numeric id; bk_ns0_nodes[] is sorted by id.
 * Each reference appears once, in forward direction, in the refs/nrefs
 * slice of its source node, sorted by (type, target); the loader stores it
 * at both ends.  Strings are offsets of NUL-terminated UTF-8 in
 * bk_ns0_strings (0 = absent).  A value is an OPC UA Binary Variant
 * (Part 6 §5.2.2.16) of value_len bytes at bk_ns0_values + value; nodes may
 * share identical values.  Descriptions are text only (no Locale).
 */
#ifndef BK_NS0_GEN_H
#define BK_NS0_GEN_H

#include <stdint.h>

#define BK_NS0_F_ABSTRACT          0x01
#define BK_NS0_F_SYMMETRIC         0x02
#define BK_NS0_F_CONTAINS_NO_LOOPS 0x04
#define BK_NS0_F_HISTORIZING       0x08
#define BK_NS0_F_EXECUTABLE        0x10

struct bk_ns0_node {
    uint32_t id;             /* ns=0;i=id */
    uint8_t  node_class;     /* NodeClass value: 1 Object, 2 Variable, 4 Method, 8 ObjectType, 16 VariableType, 32 ReferenceType, 64 DataType, 128 View */
    uint8_t  flags;          /* BK_NS0_F_* */
    uint8_t  access_level;   /* AccessLevel (NodeSet default 1) */
    uint8_t  event_notifier; /* EventNotifier (default 0) */
    uint32_t browse_name;    /* offset in bk_ns0_strings of the NUL-terminated name (BrowseName namespace is 0 for all of ns0; assert it) */
    uint32_t display_name;   /* offset in bk_ns0_strings (DisplayName text) */
    uint32_t display_locale; /* offset, 0 = no locale */
    uint32_t inverse_name;   /* ReferenceTypes: offset of InverseName text, 0 = none */
    uint32_t description;    /* offset of the Description text, 0 = none */
    uint32_t data_type;      /* Variables/VariableTypes: ns0 numeric id of DataType (aliases resolved; default i=24) else 0 */
    int32_t  value_rank;     /* Variables/VariableTypes: ValueRank (default -1) else 0 */
    uint32_t array_dims;     /* index in bk_ns0_u32 of { n, dim_1..dim_n }, 0 = none (put a dummy 0 at bk_ns0_u32[0]) */
    uint32_t value;          /* offset in bk_ns0_values of the encoded Variant */
    uint32_t value_len;      /* 0 = the node has no Value in the NodeSet */
    uint32_t write_mask;     /* WriteMask (default 0) */
    uint32_t refs;           /* first index in bk_ns0_refs */
    uint32_t nrefs;
    double   min_sampling;   /* MinimumSamplingInterval (default 0) */
};
struct bk_ns0_ref {
    uint32_t type;           /* ns0 numeric id of the ReferenceType */
    uint32_t target;         /* ns0 numeric id of the target */
};
extern const struct bk_ns0_node bk_ns0_nodes[];   /* sorted by id */
extern const struct bk_ns0_ref  bk_ns0_refs[];
extern const char               bk_ns0_strings[]; /* bk_ns0_strings[0] == '\\0' */
extern const uint8_t            bk_ns0_values[];
extern const uint32_t           bk_ns0_u32[];
#define BK_NS0_NODES %(nnodes)d
#define BK_NS0_REFS  %(nrefs)d
#define BK_NS0_STRINGS_SIZE %(ssize)d
#define BK_NS0_VALUES_SIZE %(vsize)d

#endif /* BK_NS0_GEN_H */
''' % {'ver': SPEC_VERSION, 'nnodes': nnodes, 'nrefs': nrefs,
       'ssize': strings_size, 'vsize': values_size}


def c_double(x):
    r = repr(float(x))
    if r in ('inf', '-inf', 'nan'):
        fail('MinimumSamplingInterval %s not representable' % r)
    return r


def wrap_items(items, indent='    ', width=80):
    lines, cur = [], indent
    for it in items:
        if len(cur) + len(it) + 1 > width and cur.strip():
            lines.append(cur.rstrip())
            cur = indent
        cur += it + ' '
    if cur.strip():
        lines.append(cur.rstrip())
    return lines


def gen_source(schema, order, rows, refs, strings, values, dims):
    o = [banner(schema)]
    o.append('''\
/*
 * broker/ns0_gen.c: the tables declared in broker/ns0_gen.h.  Node fields
 * in the order of struct bk_ns0_node:
 *   { id, node_class, flags, access_level, event_notifier,
 *     browse_name, display_name, display_locale, inverse_name,
 *     description,
 *     data_type, value_rank, array_dims, value, value_len,
 *     write_mask, refs, nrefs, min_sampling }
 * bk_ns0_strings and bk_ns0_values are string literals; the compiler's
 * terminating NUL is the last string's terminator, and one byte past
 * BK_NS0_VALUES_SIZE in bk_ns0_values.
 */
#include "ns0_gen.h"

#include <assert.h>

const struct bk_ns0_node bk_ns0_nodes[] = {
''')
    for n, r in rows:
        o.append('    /* i=%d %s */\n' % (n.id, comment_text(n.browse_name)))
        a = ['%d,' % r[0], '%d,' % r[1], '0x%02x,' % r[2], '%d,' % r[3],
             '%d,' % r[4], '%d,' % r[5], '%d,' % r[6], '%d,' % r[7],
             '%d,' % r[8], '%d,' % r[9], '%d,' % r[10], '%d,' % r[11],
             '%d,' % r[12], '%d,' % r[13], '%d,' % r[14], '%d,' % r[15],
             '%d,' % r[16], '%d,' % r[17], c_double(r[18])]
        a[0] = '{ ' + a[0]
        a[-1] += ' },'
        o.append('\n'.join(wrap_items(a, '    ')).replace(
            '\n    ', '\n      ') + '\n')
    o.append('};\n\n')

    o.append('const struct bk_ns0_ref bk_ns0_refs[] = {\n')
    for n, r in rows:
        if not n.refs:
            continue
        o.append('    /* i=%d %s: %d */\n'
                 % (n.id, comment_text(n.browse_name), len(n.refs)))
        o.append('\n'.join(wrap_items(
            ['{ %d, %d },' % tr for tr in n.refs])) + '\n')
    o.append('};\n\n')

    o.append('const char bk_ns0_strings[] =\n')
    items = strings.items
    o.append('    "\\0"\n')
    for i, (off, b, label) in enumerate(items):
        body = b[:-1] if i == len(items) - 1 else b
        o.append('    /* %d */\n' % off)
        o.append('\n'.join(literal_lines(body, '    ')) + '\n')
    o.append('    ;\n\n')

    o.append('const uint8_t bk_ns0_values[] =\n')
    if not values.items:
        o.append('    ""\n')
    for off, b, label in values.items:
        o.append('    /* %d: %s, %d bytes */\n'
                 % (off, comment_text(label), len(b)))
        o.append('\n'.join(literal_lines(b, '    ')) + '\n')
    o.append('    ;\n\n')

    o.append('const uint32_t bk_ns0_u32[] = {\n')
    o.append('\n'.join(wrap_items(['%d,' % x for x in dims])) + '\n')
    o.append('};\n\n')

    o.append('''\
static_assert(sizeof(bk_ns0_nodes) / sizeof(bk_ns0_nodes[0]) == BK_NS0_NODES,
              "node count");
static_assert(sizeof(bk_ns0_refs) / sizeof(bk_ns0_refs[0]) == BK_NS0_REFS,
              "reference count");
static_assert(sizeof(bk_ns0_strings) == BK_NS0_STRINGS_SIZE, "strings");
static_assert(sizeof(bk_ns0_values) == BK_NS0_VALUES_SIZE + 1, "values");
''')
    return ''.join(o)


def write(path, text):
    """Write text whole or not at all (no half-written output on failure)."""
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8', newline='\n') as f:
        f.write(text)
    os.replace(tmp, path)


# ----------------------------------------------------------------- main

def main(argv):
    if len(argv) != 3:
        sys.exit('usage: %s SCHEMA_DIR OUT_DIR' % SCRIPT)
    schema, outdir = argv[1], argv[2]
    root = ET.parse(os.path.join(schema, 'Opc.Ua.NodeSet2.xml')).getroot()
    check_schema_version(root)
    aliases = {}
    for a in root.findall(NS_SET + 'Aliases/' + NS_SET + 'Alias'):
        aliases[a.get('Alias')] = (a.text or '').strip()
    by_name, by_id = read_nodeids(schema)
    enc = ValueEncoder(by_name, by_id, read_bsd(schema))
    stats = collections.Counter()
    problems = []

    nodes, raw_refs = read_nodes(root, aliases, enc, stats)
    nfwd = normalise_refs(nodes, raw_refs, aliases, stats, problems)
    check_targets(nodes, problems)
    order, rows, refs, strings, values, dims, shared = build_tables(nodes)

    h = gen_header(schema, len(order), len(refs), len(strings.data),
                   len(values.data))
    c = gen_source(schema, order, rows, refs, strings, values, dims)
    write(os.path.join(outdir, 'ns0_gen.h'), h)
    write(os.path.join(outdir, 'ns0_gen.c'), c)

    p = print
    p('%s: %d nodes -> ns0_gen.h, ns0_gen.c' % (SCRIPT, len(order)))
    by_class = collections.Counter(n.tag for n in order)
    for tag, nc in NODE_CLASSES.items():
        p('  %-16s %5d  (NodeClass %d)' % (tag, by_class[tag], nc))
    p('  references: %d listed, %d after de-duplication (forward, stored '
      'once); %d listed twice (at both ends), %d listed only at the source, '
      '%d only at the target; %d listed more than twice, %d repeated at the '
      'same end; both directions = %d'
      % (stats['references listed'], nfwd, stats['references listed twice'],
         stats['references listed only at the source'],
         stats['references listed only at the target'],
         stats['references listed more than twice'],
         stats['references listed twice at the same end'], 2 * nfwd))
    vt = collections.Counter(n.value_type for n in order if n.value_type)
    p('  values: %d nodes with a Value, %d distinct encodings (%d shared)'
      % (sum(vt.values()), len(values.items), shared))
    for t, cnt in sorted(vt.items()):
        p('    %-24s %5d' % (t, cnt))
    p('    ExtensionObject bodies: %s' % ', '.join(
        '%s %d' % kv for kv in sorted(enc.eo_types.items())))
    p('  strings: %d distinct, %d bytes; values: %d bytes; u32: %d words '
      '(%d distinct ArrayDimensions)'
      % (len(strings.items) + 1, len(strings.data), len(values.data),
         len(dims), len([1 for n in order if n.array_dims]) and
         len(set(n.array_dims for n in order if n.array_dims))))
    p('  flags: %s' % ', '.join('%s %d' % (a, sum(
        1 for n in order if n.flags & f)) for a, f, _, _ in FLAG_ATTRS))
    p('  not carried by the tables:')
    for k in sorted(stats):
        if k.startswith('dropped') or k.startswith('BrowseName'):
            p('    %-40s %5d' % (k, stats[k]))
    if problems:
        p('  problems (%d):' % len(problems))
        for x in problems:
            p('    ' + x)
    else:
        p('  every reference type, target and DataType exists in the NodeSet; '
          'every ParentNodeId has a reference to its child')


if __name__ == '__main__':
    main(sys.argv)
