"""Context cues: the words around an identifier that say what it is.

The Rennes study's rules lean on these (``Dr``, ``Mme``, ``né(e) le``, ``domicilié à``, ``Tél``...): a
capitalised word after ``Docteur`` is a health professional, after ``sa fille,`` a relative (PATIENT per
the guidelines), after ``Lieu de naissance`` a city. Every list here is folded (lower case, no accents,
:func:`deid_ds.kb.normalize.fold`) and matched against folded text, so ``Médecin`` and ``MEDECIN`` are one
cue. Multi-word cues are regexes over folded text; the labelling functions decide what follows them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import repeat

from deid_ds.kb.normalize import titles

# "Interne : ", "Chirurgien\t", "Senior -", "Patient(e) : "
_SEP = r"[ \t\u00a0\u202f]*(?:\(e\))?[ \t\u00a0\u202f]*(?:[:\-–—])?[ \t\u00a0\u202f]*"


def _titles(kind: str) -> frozenset[str]:
    return frozenset(t for t, (_, k) in titles().items() if k == kind)


#: Titles that announce a health professional (``dr``, ``pr``, ``docteur``, ``interne``, ``ide``...).
PROFESSIONAL_TITLES: frozenset[str] = _titles("professional") - {"as"} | {"secr", "secr.", "secretaire", "dr", "drs"}
#: The titles of a doctor or a professor, singular (``Dr``, ``Pr.``, ``Docteur``) and plural (``Drs``, ``Professeurs``):
#: written before a name only, unlike a role word (``X, interne``), and what a street may be named after.
DOCTOR_TITLES: frozenset[str] = frozenset({"dr", "dr.", "docteur", "pr", "pr.", "professeur"})
PLURAL_DOCTOR_TITLES: frozenset[str] = frozenset({"drs", "docteurs", "prs", "professeurs"})
#: Civilities, which announce anybody: the patient, a relative, a professional (``m.``, ``mme``...).
CIVILITIES: frozenset[str] = _titles("civility")

#: Phrases after which a professional's name follows (signatures, dictation, copies, requests,
#: letterhead and table fields). Folded regex alternatives, whole words; a separator (``:``, tab,
#: dash) may follow. Like every cue phrase, each starts with a letter (or a choice of words) and has
#: no ``|`` outside brackets (see :func:`cue_regex`).
DOCTOR_PHRASES: tuple[str, ...] = (
    r"dict[ee]e? par",
    r"frapp[ee]e? par",
    r"tap[ee]e? par",
    r"saisie? par",
    r"relue? par",
    r"suivie? par",
    r"realis[ee]e? par",
    r"(?:sign|valid)[ee]e?(?: electroniquement)? par",
    r"vue? par",
    r"examin[ee]e? par",
    r"adress[ee]e? par",
    r"interpret[ee]e? par",
    r"opér[ee]e? par",
    r"a la demande d[ue]",
    r"sur demande d[ue]",
    r"copies? a",
    r"double(?: adresse)? a",
    r"cc",
    r"destinataires?",
    r"medecins? traitants?",
    r"medecins? demandeurs?",
    r"medecins? referents?",
    r"medecins? prescripteurs?",
    r"medecin responsable",
    r"medecin",
    r"prescripteur",
    r"preleveur",
    r"senior",
    r"chirurgiens?",
    r"operateurs?",
    r"aides? operatoires?",
    r"anesthesistes?",
    r"assistante?s?",
    r"infirmiere?s?(?: ?\(e\))?(?: d'accueil| de bloc| de coordination| d'education| referente?| scolaires?)?",
    r"ide(?: de coordination| referente?| de nuit| de jour| de bloc)?",
    r"iade",
    r"ibode",
    r"validation(?: biologique| technique| medicale)?",
    r"biologistes?",
    r"radiologues?",
    r"cabinet medical(?! de )",  # "cabinet médical de Guipavas" names its town (CITY_PHRASES)
    r"coordination du retour",
    r"internes?",
    r"externes?",
    r"secretaires?(?: medicales?)?",
    r"cadre(?: de sante)?",
    r"kinesitherapeutes?",
    r"psychologues?",
    r"dieteticienne?s?",
    r"sages?-femmes?",
    r"ergotherapeutes?",
    r"orthophonistes?",
    r"correspondants?",
    r"ioa",
    # Every care professional is DOCTOR, whatever the profession (guidelines): the professions a staff
    # field or a nurses' transmission names before the person.
    r"aides?-soignante?s?",
    r"auxiliaires? de puericulture",
    r"conseillere?s? en genetique",
    r"assistante?s? sociale?s?",
    r"educat(?:eur|rice)s?(?: specialisee?s?)?",
    r"manipulat(?:eur|rice)s?(?: radio)?",
    r"puericultrices?",
    r"orthoptistes?",
    r"podologues?",
    # A first name alone is annotated when it stands for a person (guidelines: "transmis à [Mélanie]").
    r"transmise?s? a",
    r"transmise?s? par",
    r"transmissions? a",
    r"releve par",
    r"releve(?: faite| donnee)? a",
    r"techniciens?(?:nes?)?(?: de laboratoire)?",
    r"transmissions? faites? a",
    r"prise? en charge par",
    r"edite(?:e|\(e\))?(?: le [^\n]{4,30}?)? par",
    r"saisie",  # "Saisie : Joséphine WAGNER le 8 avril": who typed the note
    r"aides?(?=[ \t]*:)",  # "Aide : M. CLERC", the surgeon's assistant (the word alone is too common)
    # "Secrétariat : Véronique", "Secrétariat de cardiologie – Anne LE GOFF"; not "le secrétariat vous rappellera"
    r"secretariat(?: (?:de|du|d') ?[a-z\-]+)?(?=[ \t]*[:\-–—])",
    r"signature(?=[ \t]*:)",  # "Signature : Y. LE GUEN" (a form's field; the word alone is too common)
    r"signataire",
    r"rendez-vous pris (?:le [^\n]{4,30}? )?par",
    r"redige par",
    r"redigee par",
    r"compte rendu de",
    r"fait a [^\n]{2,60}? par",
)

#: Phrases after which the *next line* holds a recipient's name (letter headers).
RECIPIENT_PHRASES: tuple[str, ...] = (
    r"a l'intention d[eu]",
    r"destinataires?",
    r"adress[ee]e? a",
    r"a l'attention d[eu]",
)

#: Words that, after a name and a comma or dash, say it was a professional's (``Romain PICARD — praticien
#: hospitalier``, ``Céline, assistante médicale``).
ROLE_WORDS: frozenset[str] = frozenset(
    """medecin medecins praticien praticienne interne internes externe chef cheffe assistant assistante secretaire
    infirmier infirmiere ide iade ibode cadre responsable chirurgien chirurgienne anesthesiste kinesitherapeute kine
    psychologue dieteticien dieteticienne sage-femme orthophoniste ergotherapeute aide-soignant aide-soignante
    radiologue biologiste pharmacien pharmacienne ph cca docteur professeur dr pr senior neurologue cardiologue
    pneumologue gastro-enterologue urologue pediatre geriatre psychiatre oncologue rhumatologue dermatologue
    endocrinologue nephrologue ophtalmologiste orl gynecologue obstetricien manipulateur manipulatrice
    puericultrice auxiliaire conseillere conseiller educateur educatrice assistante-sociale operateur operatrice
    pathologiste urgentiste ioa""".split()
)

#: Identity fields and phrases after which the patient's own name follows.
PATIENT_PHRASES: tuple[str, ...] = (
    r"nom d'usage",
    r"nom de naissance",
    r"nom de jeune fille",
    r"nom (?:de )?naiss?\.?",  # "NOM NAISS.:", "NOM NAIS. :" of a fixed-width listing
    r"nom marital",
    r"nom patronymique",
    r"nom",
    r"prenoms?(?:\(s\)| usuels?)?",
    r"nom et prenoms?(?: du patient| de la patiente)?",
    r"nom, prenom",
    r"patiente?",
    r"enfant",  # a paediatric note's identity line ("Enfant Lucas MÜLLER", "ENFANT : DIALLO Awa")
    r"identite",
    r"document concernant",
    r"concernant",
    r"objet",
    r"votre patiente?",
    r"notre patiente?",
    r"vous confier",
    r"chez",
    r"de la part de",
    r"je (?:reverrai|revois|reverrais|reconvoque|reconvoquerai)",
)

#: Kinship and care relations: who follows is a relative or a carer, PATIENT per the guidelines.
RELATIVE_WORDS: frozenset[str] = frozenset(
    """fils fille filles epouse epoux mari femme compagne compagnon conjoint conjointe concubin concubine soeur
    sœur frere mere pere tuteur tutrice curateur curatrice voisin voisine neveu niece petit-fils petite-fille
    petits-enfants belle-fille gendre belle-soeur beau-frere belle-mere beau-pere ami amie aidant aidante
    oncle tante cousin cousine parrain marraine enfant enfants grand-mere grand-pere""".split()
)
RELATIVE_PHRASES: tuple[str, ...] = (r"personne de confiance", r"personne a prevenir", r"nee?", r"epouse", r"ep\.")

#: Closing formulas of a letter: the name alone on the next line (blank lines aside) is its signer's.
SIGNATURE_PHRASES: tuple[str, ...] = (
    r"cordialement",
    r"confraternellement",
    r"amicalement",
    r"(?:bien|tres) (?:bien )?(?:cordialement|confraternellement|amicalement)",
    r"bien a (?:toi|vous)",
    r"avec mes (?:salutations|sentiments|amities)(?: les)?(?: meilleures| distinguees| confraternel(?:le)?s)?",
)

#: Phrases after which a city follows (birthplace, residence, place of signature, hospital of).
CITY_PHRASES: tuple[str, ...] = (
    r"nee?(?:\(e\))? a",
    r"nee?(?:\(e\))? aux?",  # "né au [Havre]": the contracted article stays outside (guidelines)
    r"nee?(?:\(e\))? le [^\n]{4,30}? a",
    r"nee?(?:\(e\))? le [^\n]{4,30}? aux?",
    r"nee?(?:\(e\))? en [12][0-9]{3} a",  # "né en 1950 à Brest"
    r"domicilie(?:e|\(e\))? a",
    r"domicilie(?:e|\(e\))? aux?",
    r"habite a",
    r"habite aux?",
    r"demeurant a",
    r"demeurant aux?",
    r"reside a",
    r"reside aux?",
    r"vit a",
    r"vit aux?",
    r"originaire (?:de|d'|d’|du|des)",  # "originaire de [Dakar]" (guidelines: a foreign city is VILLE)
    r"fait a",
    r"redigee? a",
    r"lieu de naissance",
    r"ville de naissance",
    r"commune de (?:naissance|residence)",
    # a form's town field ("Ville : Pontivy", "Localité : Ploërmel"), its colon written
    r"(?:ville|commune|localite)(?: de (?:residence|domicile))? ?:",
    r"lieu de (?:residence|domicile) ?:",
    r"chu de",
    r"chru de",
    r"chr de",
    r"ch de",
    r"chic? de",  # centre hospitalier intercommunal
    r"chs de",
    r"ghu? de",  # groupe hospitalier (universitaire)
    r"groupe hospitalier de",
    r"hopitaux de",
    r"centre hospitalier(?: universitaire| regional| intercommunal| departemental| specialise)*"
    r" de",
    r"hopital de(?! (?:jour|nuit|semaine)\b)",  # not the day hospital ("Hôpital de Jour", a unit)
    r"hopital prive de",
    r"hopital (?:local|de (?:jour|nuit|semaine)) de",  # "Hôpital de jour de Landerneau": the unit, then the town
    r"clinique de",
    r"polyclinique de",
    r"ehpad de",
    r"cabinet de",
    r"cabinet medical de",
    r"maison de retraite de",
    r"pharmacie de",
    r"medecin generaliste a",
    r"medecin traitant a",
    r"installee? a",
    r"exercant a",
    r"hospitalisation a",
    r"vacances a",
    r"maison de sante de",
    r"residence a",
    r"transfere a",
    r"transferee a",
    r"hospitalise a",
    r"hospitalisee a",
)

_WORD_END = r"(?![\w'])"
#: What a cue phrase follows (the one character a cue regex matches): a non-word character, or the apostrophe of an
#: elided article or preposition (``l'infirmière Gaëlle``, ``l'hôpital de Brest``, ``d'IDE``), not one inside a word.
#: Written as a character set first, the lookbehinds after it: a regex that starts with a set is tried only where
#: such a character is (an alternation with a lookbehind first made the scan of the cues twice as slow).
_CUE_LEAD = r"[^\w](?<![^ld]')(?<![\w'][ld]')"


# A choice of words at a phrase's start, "(?:sign|valid)" in "(?:sign|valid)ee? par".
_LEADING_CHOICE = re.compile(r"\(\?:([a-z' ]+(?:\|[a-z' ]+)+)\)")


def cue_regex(phrases: Sequence[str], separator: str) -> re.Pattern[str]:
    """The regex of a cue for :func:`cue_matches`: any of ``phrases``, tried in order, as whole words in
    folded text (group ``cue``), then ``separator`` (group ``sep``).

    Written for speed: it matches the character before the phrase, which is not a word character as the
    phrase is a whole word, and reads the phrase and separator in a lookahead. The regex engine tries a
    regex that starts with a character set only where such a character is (it skips to it), while one
    that starts with a lookbehind was tried at every character, each phrase in turn; and the phrases are
    grouped by first letter (:func:`_by_first_letter`), so that at a word only those of its letter are.
    """
    return re.compile(
        _CUE_LEAD + r"(?=(?P<cue>" + _by_first_letter(phrases) + ")" + _WORD_END + "(?P<sep>" + separator + "))"
    )


def _by_first_letter(phrases: Sequence[str]) -> str:
    """``phrases`` as one alternation grouped by first letter: ``d(?:ict[ee]e? par|...)|f(?:rapp...)``.

    Phrases that start with different letters never match at the same place, so grouping them changes
    no match as long as each letter's phrases keep their order. A leading choice of words
    (``(?:sign|valid)ee? par``) is first spread into one phrase per word, in its order.
    """
    groups: dict[str, list[str]] = {}
    for first, rest in _first_letter_and_rest(phrases):
        groups.setdefault(first, []).append(rest)
    return "|".join(first + "(?:" + "|".join(rests) + ")" for first, rests in groups.items())


def _first_letter_and_rest(phrases: Sequence[str]) -> Iterator[tuple[str, str]]:
    """``(first letter, rest)`` of each of ``phrases``, in order, a leading choice of words spread."""
    for phrase in phrases:
        choice = _LEADING_CHOICE.match(phrase)
        spread = [word + phrase[choice.end() :] for word in choice.group(1).split("|")] if choice else [phrase]
        for alternative in spread:
            first, rest = alternative[0], alternative[1:]
            if not first.isalpha() or rest[:1] in ("?", "*", "+", "{"):
                raise ValueError(f"a cue phrase must start with a letter or a choice of words: {phrase!r}")
            yield first, rest


def phrase_regex(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """A cue regex (:func:`cue_regex`) for ``phrases``, longest first, followed by a separator."""
    return cue_regex(sorted(phrases, key=len, reverse=True), _SEP)


DOCTOR_CUE = phrase_regex(DOCTOR_PHRASES)
RECIPIENT_CUE = cue_regex(RECIPIENT_PHRASES, r"[ \t:]*")
SIGNATURE_CUE = cue_regex(SIGNATURE_PHRASES, r"[ \t,.]*")
PATIENT_CUE = phrase_regex(PATIENT_PHRASES)
_RELATIVE_CUE_PHRASES = (
    r"(?:son|sa|ses|leur)[ \u00a0]+(?:" + "|".join(sorted(RELATIVE_WORDS, key=len, reverse=True)) + ")",
    *RELATIVE_PHRASES,
)
RELATIVE_CUE = cue_regex(_RELATIVE_CUE_PHRASES, r"[ \t\u00a0]*[,:(]?[ \t\u00a0]*")  # "sa fille (Sophie)"
CITY_CUE = phrase_regex(CITY_PHRASES)

#: The labeller's cues, which :func:`cue_matches` finds in one pass over a note (see :func:`_known_cue_hits`),
#: with the first letters of their phrases.
_KNOWN_CUES: dict[re.Pattern[str], frozenset[str]] = {
    pattern: frozenset(first for first, _ in _first_letter_and_rest(phrases))
    for pattern, phrases in (
        (DOCTOR_CUE, DOCTOR_PHRASES),
        (RECIPIENT_CUE, RECIPIENT_PHRASES),
        (SIGNATURE_CUE, SIGNATURE_PHRASES),
        (PATIENT_CUE, PATIENT_PHRASES),
        (RELATIVE_CUE, _RELATIVE_CUE_PHRASES),
        (CITY_CUE, CITY_PHRASES),
    )
}
# Where any phrase of any of them starts a word: a superset of where each matches (a cue's match is one
# of its phrases, then a word end and a separator, which this does not read), grouped by first letter.
_ANY_KNOWN_CUE = re.compile(
    _CUE_LEAD
    + r"(?="
    + _by_first_letter(
        (
            *DOCTOR_PHRASES,
            *RECIPIENT_PHRASES,
            *SIGNATURE_PHRASES,
            *PATIENT_PHRASES,
            *_RELATIVE_CUE_PHRASES,
            *CITY_PHRASES,
        )
    )
    + ")"
)

#: Words that are capitalised but are never part of a person's name (stop a name run). Folded.
NOT_NAME: frozenset[str] = (
    frozenset(
        """cedex tel tel. telephone fax telecopie courriel email mail e-mail standard secretariat service unite pole
    chu chru ch chr chic chs ghu hopital clinique centre cabinet departement laboratoire objet copie cc ref date dossier
    janvier fevrier mars avril mai juin juillet aout septembre octobre novembre decembre lundi mardi mercredi
    jeudi vendredi samedi dimanche france bp cs rue avenue boulevard route chemin place allee impasse
    medecine chirurgie urgences imagerie cardiologie neurologie pneumologie urologie pediatrie oncologie
    radiologie biologie pharmacie anesthesie reanimation geriatrie psychiatrie gynecologie obstetrique
    endocrinologie nephrologie rhumatologie dermatologie hematologie ophtalmologie orl kinesitherapie
    consultation compte rendu ordonnance conclusion motif antecedents traitement examen diagnostic
    nee ne age epouse ep ans mois jours semaines et ou avec pour par sans sur sous dans chez vers apres avant
    le la les un une des du de au aux ce cette son sa ses mon ma mes votre vos notre nos leur leurs il elle
    je nous vous ils elles on qui que quoi dont signe dicte frappe valide vu lu cordialement bien
    confraternellement merci monsieur madame mademoiselle docteur professeur interne externe patient patiente
    identite prenom prenoms nom adresse domicile ville naissance sexe ipp nip iep
    ddn rpps adeli intervenant intervenants qualite fonction specialite
    sos samu smur sau uhcd ssr usld had ssiad ehpad cmp cmpp pmi mdph cpam
    ras ttt atcd rdv nfs ecg irm tdm accueil""".split()
    )
    | PROFESSIONAL_TITLES
    | CIVILITIES
    | ROLE_WORDS
)


def cue_matches(pattern: re.Pattern[str], folded: str, text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of a cue's matches in the folded text, cut at the end of the cue's line.

    ``pattern`` is a :func:`cue_regex`. Its matches do not overlap, each searched for after the last
    one's separator. Folding turns line breaks and tabs into spaces (gazetteer keys must match across
    them), so the line structure is checked on the original text: a cue phrase never spans two lines,
    and its trailing separator stops at a line break (``end`` is then the end of the line). The cue
    regexes grouped by first letter (:func:`cue_regex`) are worth it: the five cues of the notes
    of ``benchmarks/weak_label.py`` in 1,015 µs a note against 2,351 for the plain regexes, side by side.
    """
    hits = _known_cue_hits(folded)[pattern] if pattern in _KNOWN_CUES else _cue_hits(pattern, " " + folded, None)
    end = 0
    for cue_start, cue_end, sep_end in hits:
        start = cue_start - 1
        if start < end:
            continue  # inside the last match
        cue_end, end = cue_end - 1, sep_end - 1
        if "\n" in text[start:cue_end]:
            continue
        cut = text.find("\n", cue_end, end)
        yield start, (end if cut < 0 else cut)


def _cue_hits(pattern: re.Pattern[str], padded: str, starts: list[int] | None) -> list[tuple[int, int, int]]:
    """``(cue start, cue end, separator end)`` of every match of the cue ``pattern`` in ``padded``, the
    folded note after a space, which stands for what precedes the note, where a cue may start too (offsets
    there are one more than in the note).

    A cue regex's match is its one leading character, the phrase and separator being read in a
    lookahead, so ``finditer`` finds it at every place where ``match`` does: with ``starts``, a list
    of places that holds all of them, only those are tried.
    """
    hits = pattern.finditer(padded) if starts is None else filter(None, map(pattern.match, repeat(padded), starts))
    return [(hit.start("cue"), hit.end("cue"), hit.end("sep")) for hit in hits]


@lru_cache(maxsize=1)  # the labeller asks for the five cues of one note in a row, then moves to the next note
def _known_cue_hits(folded: str) -> dict[re.Pattern[str], list[tuple[int, int, int]]]:
    """:func:`_cue_hits` of each of the labeller's cues in ``folded``, found in one pass over the note.

    A regex search tries a cue at every non-word character of a note (a fifth of its characters) at a
    fixed cost each, which made the five cues' searches most of :func:`cue_matches`'s time. One search
    for the places where any of their phrases starts (:data:`_ANY_KNOWN_CUE`), a few dozen per note,
    replaces the five, and each cue is matched there only. Cached for the note (keyed by its whole
    folded text, so a result is never served for another text): the cues are asked for by three
    labelling functions that each get the note's folded text, not a shared per-note object.
    """
    padded = " " + folded
    starts = [hit.start() for hit in _ANY_KNOWN_CUE.finditer(padded)]
    return {
        pattern: _cue_hits(pattern, padded, [q for q in starts if padded[q + 1] in letters])
        for pattern, letters in _KNOWN_CUES.items()
    }


def line_end_after(text: str, offset: int) -> bool:
    """Whether only blanks separate ``offset`` from the end of its line."""
    end = text.find("\n", offset)
    return (text[offset:] if end < 0 else text[offset:end]).strip() == "" and end >= 0


#: Headings of a letterhead's staff lists: the lines below them, up to a blank line, are professionals.
STAFF_HEADING = re.compile(
    r"(?:secretariats?|secretaires?(?: medicales?)?|internes?|externes?|praticiens?(?: hospitaliers?)?|medecins?|"
    r"equipe(?: medicale| soignante| paramedicale)?|infirmiere?s?|chefs? de clinique|assistants?(?: specialistes?)?|"
    r"cadres?(?: de sante)?|kinesitherapeutes?|psychologues?|sages?-femmes?|consultants?|attaches?)"
)

#: Dictation initials at the foot of a typed letter, alone on their line: ``YK/CL`` (author/typist).
DICTATION_INITIALS = re.compile(r"(?m)^[ \t]*([A-Z]{1,4})(?:[ \t]*/[ \t]*|-)([A-Z]{1,4})[ \t]*$")
#: A letter's reference line, whose initials are the author's and the typist's (``N/Réf. : YK/CL``,
#: ``Réf. : PL/SB/2022-114``, ``Réf. P.-Y. K./SL``): two initials groups or more, each a span, then perhaps a
#: file number.
_INITIALS = r"(?:[A-Z]{1,4}|[A-Z]\.(?:-[A-Z]\.)?(?: [A-Z]\.)?)"
REFERENCE_INITIALS = re.compile(
    rf"(?<![\w/])(?:[NV]/ ?)?R[ée]f(?:[ée]rences?)?\.?[ \t]*:?[ \t]*(?P<initials>{_INITIALS}(?:/{_INITIALS})+)(?![\w])"
)
