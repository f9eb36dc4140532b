"""Clinical prose with no identifier in it, and the traps around identifiers.

Notes are mostly medicine: the weak labeller and the model must see entities inside realistic running
text, with negations, dosages, times, ages and durations (none of which is a DATE), blood pressures and
scores that look like dates (``TA 13/8``, ``Glasgow 15/15``), eponyms that look like surnames
(Parkinson, Crohn, Leriche et Fontaine), and ordinary words that are also surnames or communes
(``petite masse du bras``, ``médecin de garde``, ``voile du palais``). All of that stays unannotated.

Sentences are split by phrasing family (index 0 and 1) where their wording carries the family's style.
"""

from __future__ import annotations

import random

#: Reason for a visit, per department kind.
MOTIFS = {
    "medical": (
        "dyspnée d'effort",
        "altération de l'état général",
        "douleur thoracique atypique",
        "décompensation cardiaque",
        "pneumopathie franche lobaire aiguë",
        "bilan d'une anémie",
        "malaise avec perte de connaissance brève",
        "hyperglycémie",
        "insuffisance rénale aiguë",
        "poussée de maladie de Crohn",
        "chutes à répétition",
        "syndrome parkinsonien",
        "fibrillation atriale rapide",
        "exacerbation de BPCO",
        "hépatite alcoolique",
    ),
    "surgical": (
        "cholécystite aiguë lithiasique",
        "fracture du col du fémur droit",
        "hernie inguinale gauche",
        "appendicite aiguë",
        "coxarthrose évoluée",
        "adénocarcinome colique",
        "tumeur de vessie",
        "occlusion sur bride",
        "artériopathie stade II de Leriche et Fontaine",
        "rupture du ligament croisé antérieur",
    ),
    "emergency": (
        "chute de sa hauteur",
        "douleur abdominale",
        "traumatisme crânien",
        "plaie de la main",
        "malaise",
        "douleur thoracique",
        "dyspnée aiguë",
        "entorse de cheville",
        "confusion",
        "fièvre",
    ),
}
ANTECEDENTS = (
    "HTA",
    "diabète de type 2",
    "dyslipidémie",
    "BPCO",
    "fibrillation atriale",
    "cardiopathie ischémique",
    "maladie de Parkinson",
    "maladie d'Alzheimer",
    "maladie de Crohn",
    "maladie de Basedow",
    "maladie de Horton",
    "lymphome de Hodgkin",
    "syndrome de Cushing",
    "phénomène de Raynaud",
    "maladie de Dupuytren",
    "SAOS appareillé",
    "hypothyroïdie",
    "cancer du sein",
    "adénome de prostate",
    "insuffisance rénale chronique",
    "épilepsie",
    "endobrachyœsophage de Barrett",
    "maladie de Willebrand",
    "tabagisme sevré",
    "éthylisme chronique",
)
SURGERIES = (
    "appendicectomie",
    "cholécystectomie",
    "PTH droite",
    "PTG gauche",
    "césarienne",
    "hystérectomie",
    "cure de hernie inguinale",
    "pontage aorto-coronarien",
    "intervention de Hartmann",
    "urétérostomie de Bricker",
    "duodénopancréatectomie céphalique (intervention de Whipple)",
    "amygdalectomie",
    "thyroïdectomie totale",
)
DRUGS = (
    ("Kardégic", "75 mg", "1 sachet le midi"),
    ("Bisoprolol", "2,5 mg", "1 cp le matin"),
    ("Ramipril", "5 mg", "1 cp/j"),
    ("Atorvastatine", "40 mg", "1 cp le soir"),
    ("Metformine", "1000 mg", "1 cp matin et soir"),
    ("Eliquis", "5 mg", "1 cp x 2/j"),
    ("Furosémide", "40 mg", "1 cp le matin"),
    ("Lévothyrox", "75 µg", "1 cp à jeun"),
    ("Paracétamol", "1 g", "1 cp x 3/j si douleurs"),
    ("Amoxicilline", "1 g", "1 cp x 3/j pendant 7 jours"),
    ("Inexium", "20 mg", "1 cp le soir"),
    ("Modopar", "125 mg", "1 gél x 3/j"),
    ("Lovenox", "4000 UI", "1 injection SC/j pendant 35 jours"),
    ("Tramadol", "50 mg", "1 gél toutes les 6 h si besoin"),
    ("Seresta", "10 mg", "1/2 cp au coucher"),
    ("Pentasa", "1 g", "2 sachets x 2/j"),
    ("Insuline Lantus", "18 UI", "le soir"),
)
#: Clinical findings; several include numbers that look like dates but are not.
EXAM = (
    "TA {ta}, FC {fc} bpm, SpO2 {spo2} % en air ambiant, T° {temp} °C.",
    "Score de Glasgow à 15/15, pas de déficit sensitivo-moteur, pas de syndrome méningé.",
    "Auscultation cardiaque : bruits réguliers, pas de souffle. Pas de signe d'insuffisance cardiaque droite.",
    "Abdomen souple, dépressible, indolore. Signe de Murphy négatif. Pas de masse palpable.",
    "Petite masse ferme et mobile à la face interne du bras gauche, non inflammatoire.",
    "Mollets souples, signe de Homans négatif. Pas d'œdème des membres inférieurs.",
    "Réflexes ostéotendineux présents et symétriques, signe de Babinski absent, Lasègue négatif.",
    "Examen ORL : voile du palais symétrique, pas d'adénopathie cervicale.",
    "Poids {poids} kg pour {taille} cm, soit un IMC à {imc} kg/m².",
    "EVA à {eva}/10 à l'arrivée, {eva2}/10 après antalgiques.",
    "Bilan biologique : Hb {hb} g/dL, plaquettes {plq} G/L, CRP {crp} mg/L, créatinine {creat} µmol/L.",
)
#: Sentences with times, ages and durations: none of them is a DATE.
TIME_SENTENCES = (
    "Début des symptômes il y a {n} jours, avec aggravation depuis {n2} heures.",
    "Admission aux urgences à {h}h{mm}, prise en charge par le médecin de garde.",
    "Patient{e} âgé{e} de {age} ans, autonome à domicile.",
    "Douleurs évoluant depuis {n} semaines, sans facteur déclenchant retrouvé.",
    "Apyrexie obtenue à J{n}, relais per os à J{n2}.",
    "Hier soir vers {h}h, épisode de désaturation spontanément résolutif.",
    "Traitement antibiotique prévu pour une durée totale de {n} jours.",
    "Vers le mois d'avril, apparition d'une dyspnée, puis aggravation progressive au fil de l'été.",
    "Surveillance scopée pendant {n2} heures, sans trouble du rythme.",
    "Sortie envisagée à H{n2} si la douleur est contrôlée.",
)
NEGATIONS = (
    "Pas de fièvre, pas de frissons.",
    "Absence de douleur thoracique.",
    "Ne présente pas de trouble de la déglutition.",
    "Pas de notion de perte de connaissance.",
    "Sans signe de gravité à l'admission.",
    "Aucune allergie médicamenteuse connue.",
    "Pas d'argument pour une embolie pulmonaire.",
    "Pas de récidive des malaises depuis l'introduction du traitement.",
    "Aucun trouble cognitif n'est rapporté par l'entourage.",
    "Pas de saignement extériorisé.",
)
#: Ordinary words that are also surnames (Petit, Masse, Bras, Garde, Boulanger...) or communes (Taillis,
#: La Motte, Le Palais): they must stay unannotated.
HOMONYM_SENTENCES = (
    "Ancien boulanger, retraité, vit avec son épouse.",
    "Ancien marin pêcheur, ancien fumeur.",
    "Chute dans un taillis en taillant ses haies.",
    "Appel du médecin de garde à 22h.",
    "Petite plaie du bras droit, suturée par trois points.",
    "Lésion brune de 4 mm du dos, à surveiller.",
    "Patient jeune, sportif, sans antécédent.",
    "Masse pulsatile épigastrique, à explorer.",
    "Il jardine encore et a retourné une motte de terre avant la douleur.",
    "Berger allemand au domicile, pas d'autre animal.",
    "Travaille comme charpentier, en arrêt de travail.",
    "Cheveux roux, phototype I.",
)
CONCLUSIONS = (
    "Évolution favorable sous traitement.",
    "Poursuite du traitement habituel.",
    "Réévaluation clinique à prévoir.",
    "Le patient a été informé des résultats et de la conduite à tenir.",
    "Surveillance clinique et biologique en ville.",
    "Pas de modification thérapeutique.",
    "Arrêt de travail de 15 jours.",
)


def fill_numbers(rng: random.Random, template: str, **extra: str) -> str:
    """Fill the numeric placeholders of a clinical sentence with plausible values."""
    values = {
        # blood pressure in cmHg ("13/8") looks like a day/month date and is not one
        "ta": f"{rng.randrange(9, 18)}/{rng.randrange(5, 10)}"
        if rng.random() < 0.4
        else f"{rng.randrange(95, 175)}/{rng.randrange(55, 100)} mmHg",
        "fc": rng.randrange(50, 120),
        "spo2": rng.randrange(88, 100),
        "temp": f"{rng.randrange(360, 395) / 10:.1f}".replace(".", ","),
        "poids": rng.randrange(45, 110),
        "taille": rng.randrange(150, 192),
        "imc": f"{rng.randrange(180, 350) / 10:.1f}".replace(".", ","),
        "eva": rng.randrange(3, 10),
        "eva2": rng.randrange(0, 4),
        "hb": f"{rng.randrange(80, 160) / 10:.1f}".replace(".", ","),
        "plq": rng.randrange(90, 450),
        "crp": rng.randrange(1, 250),
        "creat": rng.randrange(50, 300),
        "n": rng.randrange(2, 15),
        "n2": rng.randrange(2, 48),
        "h": rng.randrange(0, 24),
        "mm": f"{rng.randrange(0, 60):02d}",
        "age": "?",
        "e": "",
    }
    values.update(extra)
    return template.format(**values)


def drug_lines(rng: random.Random, n: int) -> list[str]:
    return [f"{name} {dose} : {posology}" for name, dose, posology in rng.sample(DRUGS, n)]
