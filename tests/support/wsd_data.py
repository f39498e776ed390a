"""Made-up word-sense data in the layout projects/wsd reads (Raganato's XML and keys, SemCor NAF,
WordNet's two Debian packages): a few sentences, enough to run the whole benchmark in seconds."""

import io
import tarfile
from pathlib import Path

RAGANATO_XML = """<?xml version="1.0" encoding="UTF-8" ?>
<corpus lang="en" source="made-up">
<text id="senseval2.d000">
<sentence id="senseval2.d000.s000">
<wf lemma="the" pos="DET">The</wf>
<instance id="senseval2.d000.s000.t000" lemma="change_ringing" pos="NOUN">change ringing</instance>
<wf lemma="be" pos="VERB">is</wf>
<instance id="senseval2.d000.s000.t001" lemma="old" pos="ADJ">old</instance>
</sentence>
</text>
<text id="semeval2015.d001">
<sentence id="semeval2015.d001.s000">
<wf lemma="a" pos="DET">A</wf>
<instance id="semeval2015.d001.s000.t000" lemma="bank" pos="NOUN">bank</instance>
</sentence>
</text>
</corpus>
"""

NAF = """<?xml version='1.0' encoding='UTF-8'?>
<NAF>
  <text>
    <wf id="w0" sent="1">The</wf>
    <wf id="w1" sent="1">Fulton_County</wf>
    <wf id="w2" sent="1">said</wf>
    <wf id="w3" sent="2">Banks</wf>
    <wf id="w4" sent="2">lend</wf>
  </text>
  <terms>
    <term id="t0" pos="DT" lemma="the"><span><target id="w0"/></span></term>
    <term id="t1" pos="NNP" lemma="Group"><span><target id="w1"/></span>
      <externalReferences>
        <externalRef reference="1" resource="WordNet-eng30" reftype="sense_number"/>
        <externalRef reference="1:03:00::" resource="WordNet-eng30" reftype="lexical_key"/>
      </externalReferences></term>
    <term id="t2" pos="VB" lemma="say"><span><target id="w2"/></span>
      <externalReferences>
        <externalRef reference="2:32:00::" resource="WordNet-eng30" reftype="lexical_key"/>
      </externalReferences></term>
    <term id="t3" pos="NNS" lemma="bank"><span><target id="w3"/></span>
      <externalReferences>
        <externalRef reference="1:14:00::" resource="WordNet-eng30" reftype="lexical_key"/>
      </externalReferences></term>
  </terms>
</NAF>
"""

INDEX_SENSE = """bank%1:14:00:: 08420278 2 20
bank%1:17:01:: 09213565 1 25
bank%2:40:00:: 02343056 1 3
old%3:00:01:: 01638438 2 10
old%5:00:00:past:00 01729819 1 20
old%3:00:02:: 01640850 3 2
say%2:32:00:: 01009240 1 500
group%1:03:00:: 00031264 1 30
"""


def debian_package(members):
    """A Debian package in the layout dpkg writes: an ar archive holding data.tar.xz."""
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w:xz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo("./" + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    out = b"!<arch>\n"
    for name, body in [("debian-binary", b"2.0\n"), ("control.tar.xz", b"x"), ("data.tar.xz", tar_bytes.getvalue())]:
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n".encode() + body
        out += b"\n" if len(body) % 2 else b""
    return out


def write_wsd_data(data: Path) -> Path:
    """The benchmark's data folder under `data`: "bank" seen in SemCor only in its money sense."""
    (data / "semcor3.0" / "brown1").mkdir(parents=True)
    (data / "semcor3.0" / "brown1" / "br-x01.naf").write_text(NAF)
    (data / "ALL.data.xml").write_text(RAGANATO_XML)
    (data / "ALL.gold.key.txt").write_text(
        "senseval2.d000.s000.t000 change_ringing%1:04:00::\nsenseval2.d000.s000.t001 old%3:00:01::\n"
        "semeval2015.d001.s000.t000 bank%1:14:00::\n"
    )
    noun_data = b"  header line\n"
    lines = {"bank%1:14:00::": b"a financial institution", "bank%1:17:01::": b"sloping land"}
    index = INDEX_SENSE
    for key, text in lines.items():
        old_offset = next(line.split()[1] for line in INDEX_SENSE.splitlines() if line.startswith(key))
        index = index.replace(f"{key} {old_offset}", f"{key} {len(noun_data):08d}")
        noun_data += b"00000000 18 n 01 bank 0 000 | " + text + b"; example\n"
    sense_index = debian_package({"usr/share/wordnet/index.sense": index.encode()})
    (data / "wordnet-sense-index_3.0-37_all.deb").write_bytes(sense_index)
    (data / "wordnet-base_3.0-37_all.deb").write_bytes(debian_package({"usr/share/wordnet/data.noun": noun_data}))
    return data
