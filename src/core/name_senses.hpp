// Name senses: the names of products, services, programming languages,
// devices and brands that WordNet does not know or knows by another sense
// ("Obsidian" the notes app, "Tesla" the car, "PostgreSQL"), supplied as
// WordNet-like noun senses by a file of the project's own
// (tools/wordvec/names.tsv) when the build makes the WordNet image and the
// word vectors. One entry per line, four tab-separated fields:
//
//   name <TAB> kind <TAB> first|second <TAB> gloss
//
// name: the lower-case word people write (letters and digits); kind: a
// WordNet noun lemma whose most frequent sense is what the name is a kind of
// (car, editor_program, database), or up to three of them separated by
// commas, the first the main one, when each holds ("spotify":
// application_program,company); first: the name means this before any
// sense WordNet has for the word ("python" in "I code in Python"), second:
// after WordNet's most frequent noun sense ("apple"); gloss: a short plain
// definition in the words people ask with. Lines starting with '#' and
// blank lines are skipped.
//
// The same format also links a word WordNet knows to everyday kinds its
// hierarchy lacks (tools/wordvec/kinds.tsv: "dog" is a "pet", "manager" a
// "boss"): the order field is then "also", the name a word whose most
// frequent noun sense is the thing meant, the kinds further hypernyms of that
// sense, and the gloss a note saying why (read by nothing). And it says which
// of a word's WordNet senses people mean first today
// (tools/wordvec/senses.tsv: "printer" the machine, not the person who
// prints): the order field is then "prefer", and the one kind names what
// that sense is a kind of; the word's first noun sense below that kind
// becomes its most frequent one. Preferences apply before every other entry.
// And it adds everyday synonyms WordNet 3.0 lacks ("app" for an application
// program, "supplement" for a dietary supplement): the order field is then
// "same", the one kind the word's meaning. The WordNet image makes the word
// a word of the kind's most frequent sense, which becomes the word's most
// frequent sense, so that what is a kind of that sense is a kind of the word
// ("Which app ...?" asks for any application program: YNAB, Obsidian); the
// word vectors give a word WordNet lacks a sense of its own below the kind,
// as for "first", and leave a word it knows as it is (a sense more there
// moves every vector a little, the idf of its features and the common
// component being taken over all words).
#pragma once

#include <string>
#include <vector>

#include "engram/result.hpp"

namespace engram::names {

struct NameSense {
  std::string name;
  std::vector<std::string> kinds;  // 1-3, the main one first
  bool first = true;
  std::string gloss;
  int line = 0;       // in `file`, for messages
  bool also = false;  // no sense of its own: the word's most frequent noun sense gains the kinds
  std::string file;
  bool prefer = false;  // no sense of its own: its sense below the kind becomes its most frequent
  bool same = false;  // a synonym of the kind (in the WordNet image; a first sense in the vectors)
};

// The entries of a names file, in file order; InvalidArgument naming the
// line and the field when one is malformed or a name repeats, NotFound when
// the file cannot be read.
Result<std::vector<NameSense>> ReadNameSenses(const std::string& path);

// Where an entry was read, for messages: "FILE: line N: " ("line N: "
// without a file).
std::string Where(const NameSense& n);

}  // namespace engram::names
